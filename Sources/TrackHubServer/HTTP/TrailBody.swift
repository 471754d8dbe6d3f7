import TrackHubProtocol
import TrackHubStore

/// A trail body in one of its formats: the JSON Feature (several passes) or an export (one).
///
/// Every call but `fitsInOnePage` may read the store (blocking): the hub makes them on its
/// store-read queue, one at a time per body.
enum TrailBody: Sendable {
    case json(TrailStream)
    case rows(TrailExportStream)

    /// Reads the store's mark and the trail's first page.
    static func open(store: any TripStore, tripID: String, query: TrailQuery, format: TrailFormat, server: String) throws(StoreError) -> TrailBody {
        switch format {
        case .geojson: return .json(try TrailStream(store: store, tripID: tripID, query: query))
        case .gpx, .csv: return .rows(try TrailExportStream(store: store, tripID: tripID, query: query, format: format, server: server))
        }
    }

    var fitsInOnePage: Bool {
        switch self {
        case .json(let stream): return stream.fitsInOnePage
        case .rows(let stream): return stream.fitsInOnePage
        }
    }

    /// The next part of the body; nil once it is complete.
    func nextChunk() throws(StoreError) -> [UInt8]? {
        switch self {
        case .json(let stream): return try stream.nextChunk()
        case .rows(let stream): return try stream.nextChunk()
        }
    }

    /// What goes out first: the whole body when the trail fits in one page (sent with its
    /// length; no further read), else its first part (the rest is streamed).
    func firstPart() throws(StoreError) -> [UInt8] {
        guard fitsInOnePage else { return try nextChunk() ?? [] }
        var body: [UInt8] = []
        while let chunk = try nextChunk() { body.append(contentsOf: chunk) }
        return body
    }
}
