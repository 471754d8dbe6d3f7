/// One entry of a `clusters` message (PROTOCOL section 4): a single rider or a cluster.
///
/// A single rider (`count == 1`) carries `trip`, `status` and `bearing`; a cluster
/// (`count > 1`) carries `bounds` and `expansionZoom` instead. Encodes with the wire's
/// snake_case keys and leaves out the fields that are `nil`.
public struct FleetItem: Sendable, Hashable, Codable {
    /// The trip id of a single rider, or `#` followed by 16 hex digits for a cluster.
    /// A cluster's id depends only on its member set, so it is the same from one
    /// rebuild to the next while its members do not change.
    public var id: String
    /// Latitude in degrees: the rider's position or the cluster's weighted centre.
    public var lat: Double
    /// Longitude in degrees: the rider's position or the cluster's weighted centre.
    public var lon: Double
    /// The number of riders this item stands for (at least 1).
    public var count: Int
    /// A single rider's trip id (`nil` for a cluster).
    public var trip: String?
    /// A single rider's status (`nil` for a cluster).
    public var status: String?
    /// A single rider's bearing in degrees (`nil` for a cluster).
    public var bearing: Double?
    /// A cluster's `[west, south, east, north]` in degrees, covering all its members.
    public var bounds: [Double]?
    /// The smallest zoom at which a cluster splits into at least two items.
    public var expansionZoom: Int?

    /// Makes an item; prefer the values `FleetIndex.clusters` returns.
    public init(
        id: String, lat: Double, lon: Double, count: Int,
        trip: String? = nil, status: String? = nil, bearing: Double? = nil,
        bounds: [Double]? = nil, expansionZoom: Int? = nil
    ) {
        self.id = id
        self.lat = lat
        self.lon = lon
        self.count = count
        self.trip = trip
        self.status = status
        self.bearing = bearing
        self.bounds = bounds
        self.expansionZoom = expansionZoom
    }

    /// True for a cluster of two or more riders.
    public var isCluster: Bool { count > 1 }

    enum CodingKeys: String, CodingKey {
        case id, lat, lon, count, trip, status, bearing, bounds
        case expansionZoom = "expansion_zoom"
    }
}
