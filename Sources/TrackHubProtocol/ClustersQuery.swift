/// The query of `GET /v1/fleet/clusters`: `?bbox=w,s,e,n&zoom=z` (PROTOCOL section 5),
/// normalised as a `viewport` message's (section 3). `bbox` defaults to the whole world;
/// `zoom` is required.
public struct ClustersQuery: Sendable, Equatable {
    /// The normalised viewport.
    public var viewport: Viewport

    /// A query for this viewport.
    public init(viewport: Viewport) {
        self.viewport = viewport
    }

    /// Parses a query string (with or without `?`).
    public static func parse(_ query: String) throws(ProtocolError) -> ClustersQuery {
        try parse(QueryString.parse(query))
    }

    /// Reads already parsed parameters.
    public static func parse(_ query: QueryString) throws(ProtocolError) -> ClustersQuery {
        guard let zoomText = query["zoom"], !zoomText.isEmpty else { throw .badRequest("zoom is required") }
        guard let zoomNumber = QueryString.number(zoomText) else {
            throw .badRequest("zoom must be a number from 0 to \(Viewport.maxZoom)")
        }
        let zoom = try Viewport.normalizeZoom(zoomNumber.value)
        guard let bboxText = query["bbox"], !bboxText.isEmpty else {
            return ClustersQuery(viewport: .world(zoom: zoom))
        }
        let parts = bboxText.split(separator: ",", omittingEmptySubsequences: false)
        var edges: [Double] = []
        for part in parts {
            guard let number = QueryString.number(String(part)), number.isFinite else {
                throw .badRequest("bbox must be 4 comma-separated finite numbers: west,south,east,north")
            }
            edges.append(number.value)
        }
        guard edges.count == 4 else {
            throw .badRequest("bbox must be 4 comma-separated finite numbers: west,south,east,north")
        }
        return ClustersQuery(
            viewport: try Viewport.normalize(west: edges[0], south: edges[1], east: edges[2], north: edges[3], zoom: zoom))
    }
}
