import TrackHubCore

/// The query of `GET /v1/trips`: `?status=&limit=&after=` (PROTOCOL section 5).
/// Empty values count as absent.
public struct TripListQuery: Sendable, Equatable {
    /// The statuses asked for; nil: any.
    public var statuses: [TripStatus]?
    /// How many trips at most, 1–1 000 (default 100).
    public var limit: Int
    /// List trips whose id sorts (bytewise) after this one.
    public var after: String?

    /// The default page size.
    public static let defaultLimit = 100
    /// The largest page size.
    public static let maxLimit = 1_000

    /// A query with these values.
    public init(statuses: [TripStatus]? = nil, limit: Int = defaultLimit, after: String? = nil) {
        self.statuses = statuses
        self.limit = limit
        self.after = after
    }

    /// Parses a query string (with or without `?`).
    public static func parse(_ query: String) throws(ProtocolError) -> TripListQuery {
        try parse(QueryString.parse(query))
    }

    /// Reads already parsed parameters.
    public static func parse(_ query: QueryString) throws(ProtocolError) -> TripListQuery {
        var result = TripListQuery()
        if let status = query["status"], !status.isEmpty {
            var statuses: [TripStatus] = []
            for name in status.split(separator: ",", omittingEmptySubsequences: true) {
                let trimmed = String(name.trimmingSpaces())
                guard let parsed = TripStatus(rawValue: trimmed) else {
                    let known = TripStatus.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .badRequest("status must be a comma-separated list of: \(known)")
                }
                if !statuses.contains(parsed) { statuses.append(parsed) }
            }
            result.statuses = statuses.isEmpty ? nil : statuses
        }
        if let limit = query["limit"], !limit.isEmpty {
            guard let value = QueryString.integer(limit), value >= 1, value <= Int64(maxLimit) else {
                throw .badRequest("limit must be an integer from 1 to \(maxLimit)")
            }
            result.limit = Int(value)
        }
        if let after = query["after"], !after.isEmpty {
            result.after = try TripID.validate(after, field: "after")
        }
        return result
    }
}

extension Substring {
    /// Without leading and trailing spaces.
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
