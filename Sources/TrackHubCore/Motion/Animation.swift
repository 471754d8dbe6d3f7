/// One animation: the marker moves linearly in distance over `durationMs`, starting at `startT`.
public struct Animation: Sendable, Codable, Equatable {
    /// Where the marker goes.
    public enum Path: Sendable, Codable, Equatable {
        /// Follows the route's geometry between two along-route distances (metres); fromM > toM runs backwards.
        case alongRoute(fromM: Double, toM: Double)
        /// A straight line (off route, or a trip without a route).
        case straight(from: GeoPoint, to: GeoPoint)
        /// Back on route: a straight line to the route point at along distance `toM` (metres).
        case straightToRoute(from: GeoPoint, toM: Double)
        /// Still on the way back to the route when the next fix came (6.8): straight on to the
        /// route point at `entryM` (the snapped point of the fix that came back), then along the
        /// route to `toM` (metres). Linear in distance over the whole of it.
        case viaRoute(from: GeoPoint, entryM: Double, toM: Double)
    }

    /// The path the marker follows.
    public var path: Path
    /// Hub time the animation starts, ms since the epoch.
    public var startT: Int64
    /// How long it runs, ms (0: the marker is placed at the target at once).
    public var durationMs: Int64
    /// Hub time the animation ends, ms since the epoch.
    public var endT: Int64 { startT + durationMs }

    /// An animation along `path` from `startT` (hub ms); a negative `durationMs` counts as 0.
    public init(path: Path, startT: Int64, durationMs: Int64) {
        self.path = path
        self.startT = startT
        self.durationMs = max(0, durationMs)
    }

    /// The fraction of the animation done at time t, in 0...1 (1 at and after endT, and always for
    /// a zero-length animation).
    @inline(__always)
    public func fraction(at t: Int64) -> Double {
        if durationMs <= 0 || t >= endT { return 1 }
        if t <= startT { return 0 }
        return Double(t - startT) / Double(durationMs)
    }
}
