/// Positions along the route: interpolation, direction, sub-paths. All lookups are binary
/// searches over `cumulativeM`, with no allocation except where an array is returned.
extension Route {
    /// The segment that along-route distance `d` falls on: the largest i with cumulativeM[i] <= d,
    /// capped to the last segment (so `lengthM` maps to the last segment). `d` already clamped.
    @inline(__always)
    func segmentIndex(atDistance d: Double) -> Int {
        storage.cumulativeM.withUnsafeBufferPointer { c in
            var lo = 0
            var hi = c.count - 1  // invariant: c[lo] <= d, answer in lo..<hi
            while hi - lo > 1 {
                let mid = (lo + hi) >> 1
                if c[mid] <= d { lo = mid } else { hi = mid }
            }
            return min(lo, c.count - 2)
        }
    }

    /// `d` clamped to 0...lengthM (NaN counts as 0).
    @inline(__always)
    func clampedDistance(_ d: Double) -> Double {
        let len = lengthM
        if !(d > 0) { return 0 }
        return d > len ? len : d
    }

    /// The point at along-route distance `d` metres (clamped to 0...lengthM). Exactly a vertex at
    /// that vertex's distance and exactly the last point at lengthM.
    public func point(atDistance d: Double) -> GeoPoint {
        let d = clampedDistance(d)
        let i = segmentIndex(atDistance: d)
        return storage.points.withUnsafeBufferPointer { pts in
            storage.cumulativeM.withUnsafeBufferPointer { c in
                let c0 = c[i], c1 = c[i + 1]
                if d >= c1 { return pts[i + 1] }
                let len = c1 - c0
                if len <= 0 || d <= c0 { return pts[i] }
                let t = (d - c0) / len
                let a = pts[i], b = pts[i + 1]
                // Linear in degrees, like the spatial index, so a sampled point lies exactly on the
                // segment the index knows (segments are far shorter than the curvature matters).
                return GeoPoint(lat: a.lat + (b.lat - a.lat) * t, lon: a.lon + (b.lon - a.lon) * t)
            }
        }
    }

    /// The direction of travel at along-route distance `d` (clamped), degrees in [0, 360): the
    /// bearing of the segment `d` lies on (at a vertex, the segment that starts there).
    public func bearing(atDistance d: Double) -> Double {
        storage.bearings[segmentIndex(atDistance: clampedDistance(d))]
    }

    /// Geometry between two along distances (d0 may be > d1: the path then runs backwards),
    /// starting exactly at point(d0) and ending exactly at point(d1), with every route vertex
    /// between (consecutive repeated points left out). d0 == d1 gives a one-point path.
    public func path(from d0: Double, to d1: Double) -> [GeoPoint] {
        let a = clampedDistance(d0), b = clampedDistance(d1)
        if a > b { return Array(path(from: b, to: a).reversed()) }
        let first = point(atDistance: a)
        if a == b { return [first] }
        var out: [GeoPoint] = [first]
        let c = storage.cumulativeM, pts = storage.points
        // First vertex strictly after a: segmentIndex gives the last with c <= a.
        var j = segmentIndex(atDistance: a) + 1
        while j < pts.count && c[j] <= a { j += 1 }
        while j < pts.count && c[j] < b {
            if pts[j] != out[out.count - 1] { out.append(pts[j]) }
            j += 1
        }
        let last = point(atDistance: b)
        if last != out[out.count - 1] || out.count == 1 { out.append(last) }
        return out
    }

    /// The route cut at `d` (clamped): done = start...cut point, left = cut point...end (both
    /// contain the cut point).
    public func split(atDistance d: Double) -> (done: [GeoPoint], left: [GeoPoint]) {
        (path(from: 0, to: d), path(from: d, to: lengthM))
    }
}
