import TrackHubProtocol
import TrackHubStore
import TrackHubSync

/// The body of `GET /v1/trips/{id}/trail` (PROTOCOL 5), written page by page so that memory
/// stays bounded by the page size, not the trail's length.
///
/// A JSON writer cannot go back, and the Feature holds four arrays over the same fixes
/// (`coordinates`, `ts`, `seq`, `reason`), so the trail is read once per array, each pass
/// keyset-paged on (ts, seq) by a `TrailPager` up to the same mark: fixes stored meanwhile
/// (even late ones sorting mid-trail) appear in none, so the arrays stay aligned. The writer
/// calls are those a whole-trail encoding makes, so the bytes are too.
///
/// Making it and `nextChunk` read the store (blocking): the hub calls both on its store-read
/// queue. Sendable: the state sits behind a mutex; the hub asks for one chunk at a time.
final class TrailStream: Sendable {
    /// Fixes per page: about 50 KiB of coordinates, less for the other arrays.
    static let pageSize = 2_000

    private struct State: Sendable {
        var pager: TrailPager
        /// Started by the first chunk; its phase says which array the current pass writes.
        var feature: TrailFeatureWriter?
        /// Fixes written by the current pass, and by the first one.
        var passCount = 0
        var firstPassCount: Int?
    }

    private let tripID: String
    /// Fewer than two fixes in all only if the first page has fewer than two (pages hold at least two).
    private let hasLine: Bool
    /// True when the whole trail is in the first page: the body can then be sent whole.
    let fitsInOnePage: Bool
    private let state: HubMutex<State>

    /// Reads the store's mark and the first page; a store failure here can still become an error reply.
    init(store: any TripStore, tripID: String, query: TrailQuery, pageSize: Int = TrailStream.pageSize) throws(StoreError) {
        let pager = try TrailPager(store: store, tripID: tripID, query: query, pageSize: max(2, pageSize))
        self.tripID = tripID
        hasLine = pager.firstPage.fixes.count >= 2
        fitsInOnePage = pager.fitsInOnePage
        state = HubMutex(State(pager: pager))
    }

    /// The next part of the body; nil once it is complete. Reads at most one page.
    func nextChunk() throws(StoreError) -> [UInt8]? {
        try state.withLock { (state: inout State) throws(StoreError) -> [UInt8]? in
            // Taken out while written, so its buffer is never shared (no copy on write).
            var feature = state.feature.take() ?? TrailFeatureWriter(trip: tripID, hasLine: hasLine)
            defer { state.feature = feature }
            if feature.phase == .done { return nil }
            let page = try state.pager.nextPage()
            for stored in page.fixes { feature.append(stored.fix, refusal: stored.refusal) }
            state.passCount += page.fixes.count
            if page.next == nil { try endPass(&state, &feature) }
            return feature.takeWritten()
        }
    }

    /// Closes the array a pass wrote and opens the next one.
    private func endPass(_ state: inout State, _ feature: inout TrailFeatureWriter) throws(StoreError) {
        // Every pass reads the same fixes unless some were deleted meanwhile (trip purged,
        // memory bound): then stop rather than send arrays that do not line up. Reported as
        // a store failure: the store could not give one consistent trail; a retry can.
        if let first = state.firstPassCount, first != state.passCount {
            throw .unavailable("trail of \(tripID) changed while streaming (\(first) then \(state.passCount) fixes)")
        }
        state.firstPassCount = state.passCount
        state.passCount = 0
        feature.endArray()
    }
}
