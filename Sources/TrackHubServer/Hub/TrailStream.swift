import Synchronization
import TrackHubProtocol
import TrackHubStore

/// The body of `GET /v1/trips/{id}/trail` (PROTOCOL 5), written page by page so that memory
/// stays bounded by the page size, not the trail's length.
///
/// A JSON writer cannot go back, and the Feature holds four arrays over the same fixes
/// (`coordinates`, `ts`, `seq`, `reason`), so the trail is read once per array, each pass
/// keyset-paged on (ts, seq). Every pass reads up to the same `fixMark()` taken at the start:
/// fixes stored meanwhile (even late ones sorting mid-trail) appear in none, so the arrays
/// stay aligned. The writer calls are those a whole-trail encoding makes, so the bytes are too.
///
/// Sendable: the state sits behind a mutex (it is only used on the service thread anyway).
final class TrailStream: Sendable {
    /// Fixes per page: about 50 KiB of coordinates, less for the other arrays.
    static let pageSize = 2_000

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private struct State: Sendable {
        /// Started by the first chunk; its phase says which array the current pass writes.
        var feature: TrailFeatureWriter?
        /// Where the current pass stands; nil: at its start.
        var cursor: TrailCursor?
        /// Fixes written by the current pass, and by the first one.
        var passCount = 0
        var firstPassCount: Int?
    }

    private let store: any TripStore
    private let tripID: String
    private let query: TrailQuery
    private let mark: Int64
    private let pageSize: Int
    /// The first page, read once: every pass starts with it.
    private let firstPage: TrailPage
    private let state = Mutex(State())

    /// Reads the store's mark and the first page; a store failure here can still become an error reply.
    init(store: any TripStore, tripID: String, query: TrailQuery, pageSize: Int = TrailStream.pageSize) throws(StoreError) {
        self.store = store
        self.tripID = tripID
        self.query = query
        self.pageSize = max(2, pageSize)
        mark = try store.fixMark()
        firstPage = try store.trailPage(tripID: tripID, after: nil, from: query.from, to: query.to, storedUpTo: mark, limit: self.pageSize)
    }

    /// True when the whole trail is in the first page: the body can then be sent whole.
    var fitsInOnePage: Bool { firstPage.next == nil }

    /// The next part of the body; nil once it is complete.
    func nextChunk() throws -> [UInt8]? {
        try state.withLock { (state: inout State) throws -> [UInt8]? in
            // Fewer than two fixes in all only if the first page has fewer than two (pages hold at least two).
            // Taken out while written, so its buffer is never shared (no copy on write).
            var feature = state.feature.take() ?? TrailFeatureWriter(trip: tripID, hasLine: firstPage.fixes.count >= 2)
            defer { state.feature = feature }
            if feature.phase == .done { return nil }
            let page: TrailPage
            if let cursor = state.cursor {
                do {
                    page = try store.trailPage(
                        tripID: tripID, after: cursor, from: query.from, to: query.to, storedUpTo: mark, limit: pageSize)
                } catch {
                    throw Failure(description: "trail: \(error)")
                }
            } else {
                page = firstPage
            }
            for stored in page.fixes { feature.append(stored.fix, refusal: stored.refusal) }
            state.passCount += page.fixes.count
            state.cursor = page.next
            if page.next == nil { try endPass(&state, &feature) }
            return feature.takeWritten()
        }
    }

    /// The whole body at once (small trails).
    func wholeBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try nextChunk() { body.append(contentsOf: chunk) }
        return body
    }

    /// Closes the array a pass wrote and opens the next one.
    private func endPass(_ state: inout State, _ feature: inout TrailFeatureWriter) throws {
        // Every pass reads the same fixes unless some were deleted meanwhile (trip purged,
        // memory bound): then stop rather than send arrays that do not line up.
        if let first = state.firstPassCount, first != state.passCount {
            throw Failure(description: "trail of \(tripID) changed while streaming (\(first) then \(state.passCount) fixes)")
        }
        state.firstPassCount = state.passCount
        state.passCount = 0
        state.cursor = nil
        feature.endArray()
    }
}
