import Foundation

/// Great-circle geometry on a spherical Earth (mean radius). Accurate to about 0.5 % against
/// the WGS 84 ellipsoid, which is far below GPS noise for the distances a trip deals with.
public enum Geodesy {
    /// The IUGG mean Earth radius, in metres.
    public static let earthRadiusM: Double = 6_371_008.8

    /// Degrees to radians.
    @inlinable static func rad(_ deg: Double) -> Double { deg * .pi / 180 }
    /// Radians to degrees.
    @inlinable static func deg(_ rad: Double) -> Double { rad * 180 / .pi }

    /// The great-circle (haversine) distance between two points, in metres.
    public static func distanceM(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let phi1 = rad(a.lat), phi2 = rad(b.lat)
        let dPhi = phi2 - phi1
        let dLambda = rad(b.lon - a.lon)
        let s1 = sin(dPhi / 2), s2 = sin(dLambda / 2)
        let h = s1 * s1 + cos(phi1) * cos(phi2) * s2 * s2
        // min(1, …) guards asin against rounding just above 1 for antipodal points.
        return 2 * earthRadiusM * asin(min(1, sqrt(h)))
    }

    /// The initial bearing of the great circle from `a` to `b`, in degrees clockwise from
    /// north, in [0, 360). 0 when the points coincide.
    public static func initialBearingDeg(from a: GeoPoint, to b: GeoPoint) -> Double {
        let phi1 = rad(a.lat), phi2 = rad(b.lat)
        let dLambda = rad(b.lon - a.lon)
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        if x == 0 && y == 0 { return 0 }
        return normalizedBearing(deg(atan2(y, x)))
    }

    /// The point reached from `a` after `distanceM` metres along the great circle that starts
    /// with bearing `bearingDeg` (degrees clockwise from north). Longitude is wrapped into ±180.
    public static func destination(from a: GeoPoint, bearingDeg: Double, distanceM: Double) -> GeoPoint {
        let delta = distanceM / earthRadiusM
        let theta = rad(bearingDeg)
        let phi1 = rad(a.lat), lambda1 = rad(a.lon)
        let sinPhi2 = sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta)
        let phi2 = asin(max(-1, min(1, sinPhi2)))
        let y = sin(theta) * sin(delta) * cos(phi1)
        let x = cos(delta) - sin(phi1) * sinPhi2
        let lambda2 = lambda1 + atan2(y, x)
        return GeoPoint(lat: deg(phi2), lon: wrappedLongitude(deg(lambda2)))
    }

    /// `deg` taken modulo 360 into [0, 360). Non-finite input gives 0.
    public static func normalizedBearing(_ deg: Double) -> Double {
        guard deg.isFinite else { return 0 }
        var r = deg.truncatingRemainder(dividingBy: 360)
        if r < 0 { r += 360 }
        // -1e-17 + 360 rounds to 360, which is outside the half-open range.
        return r >= 360 ? 0 : r
    }

    /// A longitude wrapped into [-180, 180].
    public static func wrappedLongitude(_ lon: Double) -> Double {
        guard lon.isFinite else { return 0 }
        if lon >= -180 && lon <= 180 { return lon }
        var r = (lon + 180).truncatingRemainder(dividingBy: 360)
        if r < 0 { r += 360 }
        return r - 180
    }

    /// Metres per degree of latitude on the sphere.
    public static let metresPerDegree: Double = earthRadiusM * .pi / 180
}
