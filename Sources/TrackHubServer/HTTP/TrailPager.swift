import TrackHubProtocol
import TrackHubStore

/// The page loop both trail bodies share (`TrailStream`'s four passes, `TrailExportStream`'s
/// one): keyset pages of one trip's trail in (ts, seq) order, every pass up to the store's
/// `fixMark()` taken when the pager was made, so fixes stored meanwhile are in no pass and
/// every pass reads the same fixes. The first page is read at once (the caller can then tell
/// whether the trail fits in one page) and kept: every pass starts with it, without a read.
///
/// Every read blocks on the store: make and page it off the service thread (the hub's
/// store-read queue, `Hub.readFromStore`).
struct TrailPager: Sendable {
    let store: any TripStore
    let tripID: String
    let query: TrailQuery
    let mark: Int64
    let pageSize: Int
    let firstPage: TrailPage
    /// Where the current pass stands; nil: at its start.
    private var cursor: TrailCursor?

    /// Reads the store's mark and the first page.
    init(store: any TripStore, tripID: String, query: TrailQuery, pageSize: Int) throws(StoreError) {
        self.store = store
        self.tripID = tripID
        self.query = query
        self.pageSize = pageSize
        mark = try store.fixMark()
        firstPage = try store.trailPage(tripID: tripID, after: nil, from: query.from, to: query.to, storedUpTo: mark, limit: pageSize)
    }

    /// True when the whole trail is in the first page.
    var fitsInOnePage: Bool { firstPage.next == nil }

    /// The current pass's next page. A page whose `next` is nil ends the pass; the call after
    /// it starts another one (with the kept first page).
    mutating func nextPage() throws(StoreError) -> TrailPage {
        let page: TrailPage
        if let cursor {
            page = try store.trailPage(tripID: tripID, after: cursor, from: query.from, to: query.to, storedUpTo: mark, limit: pageSize)
        } else {
            page = firstPage
        }
        cursor = page.next
        return page
    }
}
