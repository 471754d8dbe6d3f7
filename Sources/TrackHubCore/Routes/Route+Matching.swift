import Foundation

/// Matching positions to the route (PROTOCOL 6.1) through the grid of `RouteIndex`.
extension Route {
    /// The best point found on one segment: its parameter t in 0...1 and squared distance (m²).
    struct SegmentHit {
        var segment: Int
        var t: Double
        var distanceSquared: Double
    }

    /// An equirectangular frame centred on the query point: metres per degree east and north.
    struct QueryFrame {
        let lat: Double
        let lon: Double
        let kx: Double
        let ky: Double

        init(_ p: GeoPoint) {
            lat = p.lat
            lon = p.lon
            ky = Geodesy.metresPerDegree
            kx = ky * max(cos(Geodesy.rad(p.lat)), 1e-6)
        }
    }

    /// Closest point of segment `s` to the frame's origin, with t at least `minT`.
    @inline(__always)
    func project(segment s: Int, in f: QueryFrame, minT: Double = 0, points pts: UnsafeBufferPointer<GeoPoint>) -> SegmentHit {
        let a = pts[s], b = pts[s + 1]
        let ax = (a.lon - f.lon) * f.kx, ay = (a.lat - f.lat) * f.ky
        let dx = (b.lon - a.lon) * f.kx, dy = (b.lat - a.lat) * f.ky
        let len2 = dx * dx + dy * dy
        var t = len2 > 0 ? -(ax * dx + ay * dy) / len2 : 0
        if t < minT { t = minT } else if t > 1 { t = 1 }
        let px = ax + t * dx, py = ay + t * dy
        return SegmentHit(segment: s, t: t, distanceSquared: px * px + py * py)
    }

    /// The nearest point among segments >= minSegment (and on minSegment, t >= minT).
    ///
    /// Searches the grid ring by ring around the query's cell. Every segment not seen after
    /// ring r - 1 lies only in cells of ring >= r, which are more than (r - 1) cell widths
    /// away, so the search stops as soon as the best distance is within that bound.
    func nearestHit(_ p: GeoPoint, minSegment: Int = 0, minT: Double = 0) -> SegmentHit {
        let idx = storage.index
        let f = QueryFrame(p)
        let unit = min(idx.cellLon * f.kx, idx.cellLat * f.ky)
        let (qc, qr) = idx.cellCoordinates(lat: p.lat, lon: p.lon)
        let cols = idx.cols, rows = idx.rows
        let dc = qc < 0 ? -qc : (qc >= cols ? qc - cols + 1 : 0)
        let dr = qr < 0 ? -qr : (qr >= rows ? qr - rows + 1 : 0)
        let r0 = max(dc, dr)
        let rMax = max(qc, cols - 1 - qc, qr, rows - 1 - qr, r0)
        var best = SegmentHit(segment: -1, t: 0, distanceSquared: .infinity)
        storage.points.withUnsafeBufferPointer { pts in
            idx.cellStart.withUnsafeBufferPointer { start in
                idx.cellSegments.withUnsafeBufferPointer { segs in
                    @inline(__always) func scan(_ col: Int, _ row: Int) {
                        let c = row * cols + col
                        for k in Int(start[c])..<Int(start[c + 1]) {
                            let s = Int(segs[k])
                            if s < minSegment { continue }
                            let hit = project(segment: s, in: f, minT: s == minSegment ? minT : 0, points: pts)
                            // Ties go to the earlier segment, so equal geometry resolves in route order.
                            if hit.distanceSquared < best.distanceSquared
                                || (hit.distanceSquared == best.distanceSquared && s < best.segment)
                            {
                                best = hit
                            }
                        }
                    }
                    var r = r0
                    while r <= rMax {
                        if best.segment >= 0 {
                            let bound = Double(r - 1) * unit
                            if bound > 0 && best.distanceSquared <= bound * bound { break }
                        }
                        let rowLo = max(qr - r, 0), rowHi = min(qr + r, rows - 1)
                        let colLo = max(qc - r, 0), colHi = min(qc + r, cols - 1)
                        if rowLo <= rowHi && colLo <= colHi {
                            for row in rowLo...rowHi {
                                if row == qr - r || row == qr + r {
                                    for col in colLo...colHi { scan(col, row) }
                                } else {
                                    if qc - r >= 0 && qc - r < cols { scan(qc - r, row) }
                                    if r > 0 && qc + r >= 0 && qc + r < cols { scan(qc + r, row) }
                                }
                            }
                        }
                        r += 1
                    }
                }
            }
        }
        if best.segment < 0 {
            // Only when minSegment is past the end: answer the route's last point.
            let last = segmentCount - 1
            best = storage.points.withUnsafeBufferPointer { project(segment: last, in: f, minT: 1, points: $0) }
        }
        return best
    }

    /// The RouteMatch of a segment hit.
    func match(_ hit: SegmentHit) -> RouteMatch {
        let s = hit.segment
        let a = storage.points[s], b = storage.points[s + 1]
        let c0 = storage.cumulativeM[s], c1 = storage.cumulativeM[s + 1]
        let point: GeoPoint
        let along: Double
        if hit.t <= 0 {
            point = a; along = c0
        } else if hit.t >= 1 {
            point = b; along = c1
        } else {
            point = GeoPoint(lat: a.lat + (b.lat - a.lat) * hit.t, lon: a.lon + (b.lon - a.lon) * hit.t)
            along = c0 + (c1 - c0) * hit.t
        }
        return RouteMatch(alongM: along, offsetM: hit.distanceSquared.squareRoot(), point: point, segmentIndex: s)
    }

    /// The nearest point of the whole route (grid search, a few µs on a 20 000-point route).
    /// Offsets are measured in a local equirectangular frame at `p` (accurate to far under a
    /// metre at the distances that decide anything). Equal distances resolve to the smaller alongM.
    public func nearest(to p: GeoPoint) -> RouteMatch {
        match(nearestHit(p))
    }

    /// The nearest point of the route at or after along distance `fromAlongM` (PROTOCOL 5:
    /// projecting waypoints in order).
    public func nearest(to p: GeoPoint, fromAlongM: Double) -> RouteMatch {
        let d = clampedDistance(fromAlongM)
        let s = segmentIndex(atDistance: d)
        let c0 = storage.cumulativeM[s], c1 = storage.cumulativeM[s + 1]
        let t = c1 > c0 ? min(1, max(0, (d - c0) / (c1 - c0))) : 0
        return match(nearestHit(p, minSegment: s, minT: t))
    }

    /// PROTOCOL 6.1 candidates: every point of the route that is nearest to p *locally* (a local
    /// minimum of distance along the route, one per "pass" of the route near p) whose offset is
    /// within `toleranceM` metres of the overall nearest offset. Sorted by alongM ascending.
    /// Never empty (contains at least the overall nearest).
    public func candidates(near p: GeoPoint, toleranceM: Double) -> [RouteMatch] {
        candidates(near: p, toleranceM: toleranceM, nearest: nearestHit(p))
    }

    /// `candidates(near:toleranceM:)` when the nearest hit is already known.
    func candidates(near p: GeoPoint, toleranceM: Double, nearest: SegmentHit) -> [RouteMatch] {
        let idx = storage.index
        let f = QueryFrame(p)
        let radius = nearest.distanceSquared.squareRoot() + max(0, toleranceM.isFinite ? toleranceM : 0)
        let limit2 = radius * radius * (1 + 1e-12) + 1e-12
        let (c0, r0) = idx.cellCoordinates(lat: p.lat - radius / f.ky, lon: p.lon - radius / f.kx)
        let (c1, r1) = idx.cellCoordinates(lat: p.lat + radius / f.ky, lon: p.lon + radius / f.kx)
        let colLo = max(c0, 0), colHi = min(c1, idx.cols - 1)
        let rowLo = max(r0, 0), rowHi = min(r1, idx.rows - 1)
        var segments: [Int32] = []
        if colLo <= colHi && rowLo <= rowHi {
            for row in rowLo...rowHi {
                for col in colLo...colHi {
                    let c = row * idx.cols + col
                    for k in Int(idx.cellStart[c])..<Int(idx.cellStart[c + 1]) {
                        segments.append(idx.cellSegments[k])
                    }
                }
            }
        }
        segments.sort()
        let lastSegment = segmentCount - 1
        var out: [RouteMatch] = []
        storage.points.withUnsafeBufferPointer { pts in
            var previous: Int32 = -1
            for s32 in segments where s32 != previous {
                previous = s32
                let s = Int(s32)
                let hit = project(segment: s, in: f, points: pts)
                if hit.distanceSquared > limit2 { continue }
                // A local minimum of the distance along the route: an interior foot point, or a
                // vertex that both neighbouring segments reach at their shared end. Such a vertex
                // is counted once, on the segment that starts there.
                if hit.t >= 1 && s < lastSegment { continue }
                if hit.t <= 0 && s > 0 && project(segment: s - 1, in: f, points: pts).t < 1 { continue }
                out.append(match(hit))
            }
        }
        if out.isEmpty { out.append(match(nearest)) }
        out.sort { $0.alongM < $1.alongM }
        return out
    }

    /// The in-order rule of 6.1 over sorted candidates: the first with alongM >= referenceAlongM
    /// - jitterM wins, else the last one before it.
    static func pickInOrder(_ candidates: [RouteMatch], referenceAlongM: Double, jitterM: Double) -> RouteMatch? {
        let floor = referenceAlongM - jitterM
        return candidates.first(where: { $0.alongM >= floor }) ?? candidates.last
    }

    /// The in-order rule of 6.1: among candidates(near: p, toleranceM: max(accuracyM, 10)), the first
    /// with alongM >= referenceAlongM - jitterM wins, else the last one before it. Metres throughout.
    public func snap(_ p: GeoPoint, accuracyM: Double, referenceAlongM: Double, jitterM: Double) -> RouteMatch {
        let nearest = nearestHit(p)
        let cands = candidates(near: p, toleranceM: max(accuracyM, 10), nearest: nearest)
        return Self.pickInOrder(cands, referenceAlongM: referenceAlongM, jitterM: jitterM) ?? match(nearest)
    }
}
