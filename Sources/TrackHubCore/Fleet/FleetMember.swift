/// One rider of the fleet as the clustering index sees it (PROTOCOL section 8).
public struct FleetMember: Sendable, Hashable {
    /// The trip id (1–64 characters of `A-Z a-z 0-9 . _ : -`); unique within a fleet.
    public var id: String
    /// Where the rider's marker is (WGS 84 degrees).
    public var position: GeoPoint
    /// The trip's status, as spelled on the wire (for example `"moving"`).
    public var status: String
    /// The marker's bearing in degrees clockwise from north.
    public var bearing: Double
    /// Whether the trip is stale (PROTOCOL 18): no fix for its threshold.
    public var stale: Bool

    /// Makes a member from its trip id, marker position, status, bearing and whether it is stale.
    public init(id: String, position: GeoPoint, status: String, bearing: Double, stale: Bool = false) {
        self.id = id
        self.position = position
        self.status = status
        self.bearing = bearing
        self.stale = stale
    }
}
