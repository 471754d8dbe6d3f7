/// One entry of a `clusters` message (PROTOCOL section 4): a single rider or a cluster.
///
/// A single rider (`count == 1`) carries `trip`, `status`, `bearing` and `stale`; a cluster
/// (`count > 1`) carries `bounds` and `expansionZoom` instead. Encodes with the wire's
/// snake_case keys and leaves out the fields that are `nil`.
///
/// A cluster's id and bounds are held unrendered (its key, four numbers), so a query that
/// returns hundreds of clusters makes no heap allocation for them: building each one's
/// 17-byte id string and 4-number array had been a third of a city viewport's time.
public struct FleetItem: Sendable, Hashable {
    /// How the id is held: a cluster's key is rendered when `id` is read.
    enum Identity: Sendable, Hashable {
        case named(String)
        case cluster(key: UInt64)

        /// A rendered cluster id becomes its key, anything else stays a name, so two
        /// items with the same id string always hold the same identity.
        init(_ id: String) {
            self = FleetClusterID.parse(id).map { .cluster(key: $0) } ?? .named(id)
        }
    }

    var identity: Identity
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
    /// Whether a single rider's trip is stale (PROTOCOL 18; `nil` for a cluster).
    public var stale: Bool?
    /// A cluster's extent in degrees, covering all its members (`nil` for a single rider).
    public var extent: FleetBounds?
    /// The smallest zoom at which a cluster splits into at least two items.
    public var expansionZoom: Int?

    /// Makes an item; prefer the values `FleetIndex.clusters` returns.
    public init(
        id: String, lat: Double, lon: Double, count: Int,
        trip: String? = nil, status: String? = nil, bearing: Double? = nil, stale: Bool? = nil,
        bounds: [Double]? = nil, expansionZoom: Int? = nil
    ) {
        self.init(
            identity: Identity(id), lat: lat, lon: lon, count: count, trip: trip, status: status, bearing: bearing,
            stale: stale, extent: bounds.map(FleetBounds.init(array:)), expansionZoom: expansionZoom)
    }

    init(
        identity: Identity, lat: Double, lon: Double, count: Int, trip: String? = nil, status: String? = nil,
        bearing: Double? = nil, stale: Bool? = nil, extent: FleetBounds? = nil, expansionZoom: Int? = nil
    ) {
        self.identity = identity
        self.lat = lat
        self.lon = lon
        self.count = count
        self.trip = trip
        self.status = status
        self.bearing = bearing
        self.stale = stale
        self.extent = extent
        self.expansionZoom = expansionZoom
    }

    /// The trip id of a single rider, or `#` followed by 16 hex digits for a cluster.
    /// A cluster's id depends only on its member set, so it is the same from one
    /// rebuild to the next while its members do not change.
    public var id: String {
        get {
            switch identity {
            case .named(let name): name
            case .cluster(let key): FleetClusterID.render(key)
            }
        }
        set { identity = Identity(newValue) }
    }

    /// A cluster's key, when the id is a rendered cluster id (`#` and 16 lowercase hex
    /// digits): lets a writer print the id without building its string.
    public var clusterKey: UInt64? {
        if case .cluster(let key) = identity { key } else { nil }
    }

    /// A cluster's `[west, south, east, north]` in degrees (`nil` for a single rider).
    public var bounds: [Double]? {
        get { extent?.array }
        set { extent = newValue.map(FleetBounds.init(array:)) }
    }

    /// True for a cluster of two or more riders.
    public var isCluster: Bool { count > 1 }

    /// Whether `a`'s id sorts before `b`'s, bytewise, without rendering cluster ids:
    /// fixed-width lowercase hex sorts as its number does.
    @inline(__always)
    static func idPrecedes(_ a: borrowing FleetItem, _ b: borrowing FleetItem) -> Bool {
        switch (a.identity, b.identity) {
        case (.cluster(let ka), .cluster(let kb)): ka < kb
        case (.named(let na), .named(let nb)): na.utf8.lexicographicallyPrecedes(nb.utf8)
        default: a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
        }
    }
}

/// A cluster's extent, `[west, south, east, north]` in degrees.
public struct FleetBounds: Sendable, Hashable {
    /// Westmost longitude.
    public var west: Double
    /// Southmost latitude.
    public var south: Double
    /// Eastmost longitude.
    public var east: Double
    /// Northmost latitude.
    public var north: Double

    /// Bounds from their four sides, in degrees; not checked.
    public init(west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// From `[west, south, east, north]`; missing values are 0.
    public init(array: [Double]) {
        func at(_ i: Int) -> Double { i < array.count ? array[i] : 0 }
        self.init(west: at(0), south: at(1), east: at(2), north: at(3))
    }

    /// `[west, south, east, north]`, the wire's order.
    public var array: [Double] { [west, south, east, north] }
}

extension FleetItem: Codable {
    enum CodingKeys: String, CodingKey {
        case id, lat, lon, count, trip, status, bearing, stale, bounds
        case expansionZoom = "expansion_zoom"
    }

    /// Reads an item in the wire's keys (`expansion_zoom`), as tests and tools read `clusters`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id), lat: try c.decode(Double.self, forKey: .lat),
            lon: try c.decode(Double.self, forKey: .lon), count: try c.decode(Int.self, forKey: .count),
            trip: try c.decodeIfPresent(String.self, forKey: .trip), status: try c.decodeIfPresent(String.self, forKey: .status),
            bearing: try c.decodeIfPresent(Double.self, forKey: .bearing), stale: try c.decodeIfPresent(Bool.self, forKey: .stale), bounds: try c.decodeIfPresent([Double].self, forKey: .bounds),
            expansionZoom: try c.decodeIfPresent(Int.self, forKey: .expansionZoom))
    }

    /// Writes it in the wire's keys, absent fields left out; the hub's own writer is
    /// `FleetMessages` (TrackHubProtocol), which does not go through `Encoder`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(lat, forKey: .lat)
        try c.encode(lon, forKey: .lon)
        try c.encode(count, forKey: .count)
        try c.encodeIfPresent(trip, forKey: .trip)
        try c.encodeIfPresent(status, forKey: .status)
        try c.encodeIfPresent(bearing, forKey: .bearing)
        try c.encodeIfPresent(stale, forKey: .stale)
        try c.encodeIfPresent(bounds, forKey: .bounds)
        try c.encodeIfPresent(expansionZoom, forKey: .expansionZoom)
    }
}
