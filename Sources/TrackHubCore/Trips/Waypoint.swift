/// A stop on the way (PROTOCOL 6.6, 17). Waypoints split the route into legs and are reached in order.
public struct Waypoint: Sendable, Codable, Equatable {
    /// 0-based position in the list given at creation (reroutes number new ones after the highest
    /// index so far); never changes.
    public var index: Int
    /// The waypoint as given.
    public var point: GeoPoint
    /// Along-route distance (metres) of its projection onto the route; nil without a route.
    public var alongM: Double?
    /// True once the trip has passed it (`proceed`, or at once without waiting).
    public var visited: Bool
    /// The stop's id (PROTOCOL 17): unique among the trip's waypoints; nil when not given.
    public var id: String?
    /// The stop's name as given (at most 200 characters); nil when not given.
    public var name: String?
    /// Seconds the courier is expected to spend there (0–3 600).
    public var dwellS: Int

    /// A waypoint, not yet visited unless said.
    public init(
        index: Int, point: GeoPoint, alongM: Double?, visited: Bool = false,
        id: String? = nil, name: String? = nil, dwellS: Int = 0
    ) {
        self.index = index
        self.point = point
        self.alongM = alongM
        self.visited = visited
        self.id = id
        self.name = name
        self.dwellS = dwellS
    }

    /// The stored form's keys.
    private enum CodingKeys: String, CodingKey {
        case index, point, alongM, visited, id, name, dwellS
    }

    /// Decodes a stored waypoint; states stored before stops (PROTOCOL 17) have no id, name or
    /// dwell, which read as nil, nil and 0.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try c.decode(Int.self, forKey: .index)
        point = try c.decode(GeoPoint.self, forKey: .point)
        alongM = try c.decodeIfPresent(Double.self, forKey: .alongM)
        visited = try c.decode(Bool.self, forKey: .visited)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        dwellS = try c.decodeIfPresent(Int.self, forKey: .dwellS) ?? 0
    }

    /// The stop details as given (id, name, dwell).
    public var details: StopDetails { StopDetails(id: id, name: name, dwellS: dwellS) }
}

/// What a request says of a waypoint besides its point (PROTOCOL 17): `id`, `name`, `dwell_s`.
public struct StopDetails: Sendable, Equatable, Codable {
    /// The stop's id; nil when not given.
    public var id: String?
    /// The stop's name; nil when not given.
    public var name: String?
    /// Expected seconds there, 0–3 600.
    public var dwellS: Int

    /// Details; all absent by default.
    public init(id: String? = nil, name: String? = nil, dwellS: Int = 0) {
        self.id = id
        self.name = name
        self.dwellS = dwellS
    }

    /// The most characters of a stop's name.
    public static let maxNameLength = 200
    /// The longest dwell, seconds.
    public static let maxDwellS = 3600
}
