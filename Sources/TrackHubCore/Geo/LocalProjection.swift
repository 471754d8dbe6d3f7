import Foundation

/// Equirectangular projection around an origin: fast, accurate to well under 0.5 % within ~50 km.
///
/// x grows east and y north, both in metres. Longitude differences are wrapped into ±180° so a
/// neighbourhood that straddles the antimeridian still projects continuously.
public struct LocalProjection: Sendable {
    /// The point that projects to (0, 0).
    public let origin: GeoPoint
    /// Metres per degree of longitude at the origin's latitude.
    let metresPerDegreeLon: Double

    /// A projection centred on `origin`.
    public init(origin: GeoPoint) {
        self.origin = origin
        self.metresPerDegreeLon = Geodesy.metresPerDegree * cos(Geodesy.rad(origin.lat))
    }

    /// `p` in metres east (x) and north (y) of the origin.
    public func project(_ p: GeoPoint) -> (x: Double, y: Double) {
        var dLon = p.lon - origin.lon
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        return (dLon * metresPerDegreeLon, (p.lat - origin.lat) * Geodesy.metresPerDegree)
    }

    /// The point `x` metres east and `y` metres north of the origin.
    public func unproject(x: Double, y: Double) -> GeoPoint {
        let lat = origin.lat + y / Geodesy.metresPerDegree
        // At the poles a degree of longitude has no length; stay on the origin's meridian.
        let lon = metresPerDegreeLon > 1e-9 ? origin.lon + x / metresPerDegreeLon : origin.lon
        return GeoPoint(lat: lat, lon: Geodesy.wrappedLongitude(lon))
    }
}
