/// A WGS 84 position in degrees.
public struct GeoPoint: Sendable, Hashable, Codable {
    /// Latitude in degrees, within ±90.
    public var lat: Double
    /// Longitude in degrees, within ±180.
    public var lon: Double

    /// A point as given; `isValid` says whether it is on the globe.
    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }

    /// True when both coordinates are finite and within their WGS 84 ranges.
    public var isValid: Bool {
        lat.isFinite && lon.isFinite && abs(lat) <= 90 && abs(lon) <= 180
    }
}
