/// The query of `GET /v1/trips/{id}/trail`: `?from=&to=`, inclusive bounds on `ts` in ms
/// (PROTOCOL section 5). Empty values count as absent; `from > to` is an empty range, not an error.
public struct TrailQuery: Sendable, Equatable {
    /// The earliest `ts` to include; nil: from the start.
    public var from: Int64?
    /// The latest `ts` to include; nil: to the end.
    public var to: Int64?

    /// A query with these bounds.
    public init(from: Int64? = nil, to: Int64? = nil) {
        self.from = from
        self.to = to
    }

    /// Parses a query string (with or without `?`).
    public static func parse(_ query: String) throws(ProtocolError) -> TrailQuery {
        try parse(QueryString.parse(query))
    }

    /// Reads already parsed parameters.
    public static func parse(_ query: QueryString) throws(ProtocolError) -> TrailQuery {
        var result = TrailQuery()
        for (name, keyPath) in [("from", \TrailQuery.from), ("to", \TrailQuery.to)] {
            guard let text = query[name], !text.isEmpty else { continue }
            guard let value = QueryString.integer(text) else {
                throw .badRequest("\(name) must be an integer (ms since the epoch)")
            }
            result[keyPath: keyPath] = value
        }
        return result
    }
}
