import TrackHubProtocol
import TrackHubStore
import TrackHubSync

/// The GPX and CSV bodies of `GET /v1/trips/{id}/trail?format=` (PROTOCOL 14), written page
/// by page in one pass of a `TrailPager`, so memory stays bounded by the page.
///
/// Making it and `nextChunk` read the store (blocking): the hub calls both on its store-read
/// queue. Sendable: the state sits behind a mutex; the hub asks for one chunk at a time.
final class TrailExportStream: Sendable {
    private struct State: Sendable {
        var pager: TrailPager
        var started = false
        var done = false
    }

    private let tripID: String
    private let format: TrailFormat
    private let server: String
    /// True when the whole trail is in the first page: the body can then be sent whole.
    let fitsInOnePage: Bool
    private let state: HubMutex<State>

    /// Reads the store's mark and the first page.
    init(
        store: any TripStore, tripID: String, query: TrailQuery, format: TrailFormat, server: String = "trackhub",
        pageSize: Int = TrailStream.pageSize
    ) throws(StoreError) {
        let pager = try TrailPager(store: store, tripID: tripID, query: query, pageSize: max(1, pageSize))
        self.tripID = tripID
        self.format = format
        self.server = server
        fitsInOnePage = pager.fitsInOnePage
        state = HubMutex(State(pager: pager))
    }

    /// The next part of the body; nil once it is complete. Reads at most one page.
    func nextChunk() throws(StoreError) -> [UInt8]? {
        try state.withLock { (state: inout State) throws(StoreError) -> [UInt8]? in
            if state.done { return nil }
            var text = ""
            if !state.started {
                state.started = true
                text += format == .gpx ? TrailExport.gpxHead(trip: tripID, server: server) : TrailExport.csvHeader
            }
            let page = try state.pager.nextPage()
            for stored in page.fixes {
                let point = TrailExport.Point(ts: stored.fix.ts, lat: stored.fix.lat, lon: stored.fix.lon, reason: stored.refusal?.rawValue,
                    altitude: stored.fix.altitudeM, battery: stored.fix.batteryPercent)
                text += format == .gpx ? TrailExport.gpxPoint(point) : TrailExport.csvRow(point)
            }
            if page.next == nil {
                state.done = true
                if format == .gpx { text += TrailExport.gpxTail }
            }
            return Array(text.utf8)
        }
    }
}
