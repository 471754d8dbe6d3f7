/// A trail body in one of its formats: the JSON Feature (several passes) or an export (one).
enum TrailBody: Sendable {
    case json(TrailStream)
    case rows(TrailExportStream)

    var fitsInOnePage: Bool {
        switch self {
        case .json(let stream): return stream.fitsInOnePage
        case .rows(let stream): return stream.fitsInOnePage
        }
    }

    func nextChunk() throws -> [UInt8]? {
        switch self {
        case .json(let stream): return try stream.nextChunk()
        case .rows(let stream): return try stream.nextChunk()
        }
    }

    func wholeBody() throws -> [UInt8] {
        switch self {
        case .json(let stream): return try stream.wholeBody()
        case .rows(let stream): return try stream.wholeBody()
        }
    }
}
