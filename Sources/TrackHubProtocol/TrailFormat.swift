/// The `format` of `GET /v1/trips/{id}/trail` (PROTOCOL 14): GeoJSON (default), GPX 1.1 or CSV.
public enum TrailFormat: String, Sendable, CaseIterable {
    case geojson, gpx, csv

    /// Reads `?format=`; absent or empty is GeoJSON, another value is `bad_request` naming `format`.
    public static func parse(_ query: QueryString) throws(ProtocolError) -> TrailFormat {
        guard let text = query["format"], !text.isEmpty else { return .geojson }
        guard let format = TrailFormat(rawValue: text) else {
            throw .badRequest("format must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), not \(String(text.prefix(32)))")
        }
        return format
    }

    /// The body's media type.
    public var contentType: String {
        switch self {
        case .geojson: return "application/geo+json"
        case .gpx: return "application/gpx+xml"
        case .csv: return "text/csv; charset=utf-8; header=present"
        }
    }

    /// The file name a download is saved as; nil for GeoJSON (read by programs, not saved).
    public func attachmentName(trip: String) -> String? {
        switch self {
        case .geojson: return nil
        case .gpx: return "\(trip).gpx"
        case .csv: return "\(trip).csv"
        }
    }
}
