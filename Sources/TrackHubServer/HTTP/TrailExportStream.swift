import Synchronization
import TrackHubProtocol
import TrackHubStore

/// The GPX and CSV bodies of `GET /v1/trips/{id}/trail?format=` (PROTOCOL 14), written page
/// by page in one keyset-paged pass up to the store's mark, so memory stays bounded by the page.
final class TrailExportStream: Sendable {
    private struct State: Sendable {
        var started = false
        var done = false
        var cursor: TrailCursor?
    }

    private let store: any TripStore
    private let tripID: String
    private let query: TrailQuery
    private let format: TrailFormat
    private let server: String
    private let mark: Int64
    private let pageSize: Int
    private let firstPage: TrailPage
    private let state = Mutex(State())

    init(
        store: any TripStore, tripID: String, query: TrailQuery, format: TrailFormat, server: String = "trackhub",
        pageSize: Int = TrailStream.pageSize
    ) throws(StoreError) {
        self.store = store
        self.tripID = tripID
        self.query = query
        self.format = format
        self.server = server
        self.pageSize = max(1, pageSize)
        mark = try store.fixMark()
        firstPage = try store.trailPage(tripID: tripID, after: nil, from: query.from, to: query.to, storedUpTo: mark, limit: self.pageSize)
    }

    var fitsInOnePage: Bool { firstPage.next == nil }

    /// The next part of the body; nil once it is complete.
    func nextChunk() throws -> [UInt8]? {
        try state.withLock { (state: inout State) throws -> [UInt8]? in
            if state.done { return nil }
            var text = ""
            let page: TrailPage
            if !state.started {
                state.started = true
                text += format == .gpx ? TrailExport.gpxHead(trip: tripID, server: server) : TrailExport.csvHeader
                page = firstPage
            } else {
                do {
                    page = try store.trailPage(
                        tripID: tripID, after: state.cursor, from: query.from, to: query.to, storedUpTo: mark, limit: pageSize)
                } catch {
                    throw TrailStream.Failure(description: "trail: \(error)")
                }
            }
            for stored in page.fixes {
                let point = TrailExport.Point(ts: stored.fix.ts, lat: stored.fix.lat, lon: stored.fix.lon, reason: stored.refusal?.rawValue,
                    altitude: stored.fix.altitudeM, battery: stored.fix.batteryPercent)
                text += format == .gpx ? TrailExport.gpxPoint(point) : TrailExport.csvRow(point)
            }
            state.cursor = page.next
            if page.next == nil {
                state.done = true
                if format == .gpx { text += TrailExport.gpxTail }
            }
            return Array(text.utf8)
        }
    }

    func wholeBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try nextChunk() { body.append(contentsOf: chunk) }
        return body
    }
}
