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

    private enum Phase: Sendable { case head, coordinates, ts, seq, reason, done }

    private struct State: Sendable {
        var writer = JSONWriter(headroom: 0, capacity: 64 * 1024)
        var phase = Phase.head
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
            if state.phase == .done { return nil }
            if state.phase == .head { writeHead(&state) }
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
            writeElements(page.fixes, &state)
            state.passCount += page.fixes.count
            state.cursor = page.next
            if page.next == nil { try endPass(&state) }
            return state.writer.takeWritten()
        }
    }

    /// The whole body at once (small trails).
    func wholeBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try nextChunk() { body.append(contentsOf: chunk) }
        return body
    }

    private func writeHead(_ state: inout State) {
        state.writer.beginObject()
        state.writer.field("type", "Feature")
        state.writer.key("geometry")
        // Fewer than two fixes in all only if the first page has fewer than two (pages hold at least two).
        if firstPage.fixes.count >= 2 {
            state.writer.beginObject()
            state.writer.field("type", "LineString")
            state.writer.key("coordinates")
            state.writer.beginArray()
            state.phase = .coordinates
        } else {
            state.writer.null()
            beginProperties(&state)
        }
    }

    private func beginProperties(_ state: inout State) {
        state.writer.key("properties")
        state.writer.beginObject()
        state.writer.field("trip", tripID)
        state.writer.key("ts")
        state.writer.beginArray()
        state.phase = .ts
    }

    private func writeElements(_ fixes: [StoredFix], _ state: inout State) {
        switch state.phase {
        case .coordinates:
            for stored in fixes { state.writer.lonLat(lon: stored.fix.lon, lat: stored.fix.lat) }
        case .ts:
            for stored in fixes { state.writer.int(stored.fix.ts) }
        case .seq:
            for stored in fixes {
                if let seq = stored.fix.seq { state.writer.int(seq) } else { state.writer.null() }
            }
        case .reason:
            for stored in fixes {
                if let reason = stored.refusal { state.writer.string(reason.rawValue) } else { state.writer.null() }
            }
        case .head, .done:
            break
        }
    }

    /// Closes the array a pass wrote and opens the next one.
    private func endPass(_ state: inout State) throws {
        // Every pass reads the same fixes unless some were deleted meanwhile (trip purged,
        // memory bound): then stop rather than send arrays that do not line up.
        if let first = state.firstPassCount, first != state.passCount {
            throw Failure(description: "trail of \(tripID) changed while streaming (\(first) then \(state.passCount) fixes)")
        }
        state.firstPassCount = state.passCount
        state.passCount = 0
        state.cursor = nil
        state.writer.endArray()
        switch state.phase {
        case .coordinates:
            state.writer.endObject()
            beginProperties(&state)
        case .ts:
            state.writer.key("seq")
            state.writer.beginArray()
            state.phase = .seq
        case .seq:
            state.writer.key("reason")
            state.writer.beginArray()
            state.phase = .reason
        case .reason:
            state.writer.endObject()
            state.writer.endObject()
            state.phase = .done
        case .head, .done:
            break
        }
    }
}
