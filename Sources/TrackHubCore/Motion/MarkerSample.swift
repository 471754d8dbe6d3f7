/// Where the marker is at one moment.
public struct MarkerSample: Sendable, Equatable {
    /// The marker's position.
    public var position: GeoPoint
    /// Direction of travel, degrees clockwise from north, in [0, 360).
    public var bearingDeg: Double
    /// Along-route distance in metres when the marker is on the route; nil off it (and
    /// mid-way along a straight line back to the route).
    public var alongM: Double?

    /// A sample; `bearingDeg` is taken as given, not normalised.
    public init(position: GeoPoint, bearingDeg: Double, alongM: Double?) {
        self.position = position
        self.bearingDeg = bearingDeg
        self.alongM = alongM
    }
}
