import Foundation

/// Web Mercator in the unit square, exactly as supercluster projects points:
/// x grows eastwards from 0 at −180° to 1 at +180°, y grows southwards and is clamped
/// to [0, 1] (so latitudes beyond ±85.05112878° land on the edge).
enum FleetMercator {
    /// The mercator x of a longitude in degrees.
    @inline(__always)
    static func x(lon: Double) -> Double {
        lon / 360 + 0.5
    }

    /// The mercator y of a latitude in degrees, clamped to [0, 1].
    @inline(__always)
    static func y(lat: Double) -> Double {
        let s = sin(lat * Double.pi / 180)
        let y = 0.5 - 0.25 * log((1 + s) / (1 - s)) / Double.pi
        return y < 0 ? 0 : (y > 1 ? 1 : y)
    }

    /// The longitude in degrees of a mercator x.
    @inline(__always)
    static func lon(x: Double) -> Double {
        (x - 0.5) * 360
    }

    /// The latitude in degrees of a mercator y.
    @inline(__always)
    static func lat(y: Double) -> Double {
        let y2 = (180 - y * 360) * Double.pi / 180
        return 360 * atan(exp(y2)) / Double.pi - 90
    }
}
