import Foundation

/// A uniform grid over a route's segments, in degree space, for nearest-segment queries.
///
/// Cells are roughly square in metres at the route's mid latitude and about one mean segment
/// long, with at most ~4 cells per segment overall. Each segment is listed in every cell it
/// passes through (an exact supercover, not its bounding box, so a long diagonal segment costs
/// cells in proportion to its length, not its area). Cell lists are stored flat (CSR).
///
/// Queries measure distance in an equirectangular frame centred on the query point, which is
/// affine in lat/lon: segments stay straight, and the error is far below GPS noise at the
/// distances that matter (a few km). Routes crossing the antimeridian are not supported.
struct RouteIndex: Sendable {
    let minLat: Double
    let minLon: Double
    /// Cell height and width in degrees.
    let cellLat: Double
    let cellLon: Double
    let cols: Int
    let rows: Int
    /// Segments of cell (row * cols + col) are cellSegments[cellStart[c] ..< cellStart[c + 1]].
    let cellStart: [Int32]
    let cellSegments: [Int32]

    init(points: [GeoPoint]) {
        var minLat = Double.infinity, maxLat = -Double.infinity
        var minLon = Double.infinity, maxLon = -Double.infinity
        for p in points {
            minLat = min(minLat, p.lat); maxLat = max(maxLat, p.lat)
            minLon = min(minLon, p.lon); maxLon = max(maxLon, p.lon)
        }
        let segCount = max(points.count - 1, 1)
        let cosMid = max(cos(Geodesy.rad((minLat + maxLat) / 2)), 0.01)
        let ky = Geodesy.metresPerDegree, kx = ky * cosMid
        var planarLength = 0.0
        for i in 0..<(points.count - 1) {
            let dx = (points[i + 1].lon - points[i].lon) * kx
            let dy = (points[i + 1].lat - points[i].lat) * ky
            planarLength += (dx * dx + dy * dy).squareRoot()
        }
        let width = (maxLon - minLon) * kx, height = (maxLat - minLat) * ky
        var cell = max(planarLength / Double(segCount), (width * height / Double(segCount)).squareRoot(), 1)
        var cols = Int(width / cell) + 1, rows = Int(height / cell) + 1
        let maxCells = 4 * segCount + 64
        while cols * rows > maxCells {
            cell *= 1.5
            cols = Int(width / cell) + 1
            rows = Int(height / cell) + 1
        }
        self.minLat = minLat
        self.minLon = minLon
        self.cellLat = cell / ky
        self.cellLon = cell / kx
        self.cols = cols
        self.rows = rows

        // Two passes over the same rasterisation: count, then fill (CSR without per-cell arrays).
        var counts = [Int32](repeating: 0, count: cols * rows + 1)
        Self.rasterize(points, minLat, minLon, cellLat, cellLon, cols, rows) { c, _ in counts[c] += 1 }
        var start = [Int32](repeating: 0, count: cols * rows + 1)
        var acc: Int32 = 0
        for c in 0..<(cols * rows) {
            start[c] = acc
            acc += counts[c]
        }
        start[cols * rows] = acc
        var fill = start
        var segs = [Int32](repeating: 0, count: Int(acc))
        Self.rasterize(points, minLat, minLon, cellLat, cellLon, cols, rows) { c, s in
            segs[Int(fill[c])] = Int32(s)
            fill[c] += 1
        }
        self.cellStart = start
        self.cellSegments = segs
    }

    /// Calls `visit(cell, segment)` for every cell each segment passes through (each pair once).
    private static func rasterize(
        _ pts: [GeoPoint], _ minLat: Double, _ minLon: Double, _ cellLat: Double, _ cellLon: Double,
        _ cols: Int, _ rows: Int, _ visit: (Int, Int) -> Void
    ) {
        let eps = 1e-9
        for s in 0..<(pts.count - 1) {
            let x0 = (pts[s].lon - minLon) / cellLon, y0 = (pts[s].lat - minLat) / cellLat
            let x1 = (pts[s + 1].lon - minLon) / cellLon, y1 = (pts[s + 1].lat - minLat) / cellLat
            let yLo = min(y0, y1), yHi = max(y0, y1)
            let r0 = max(0, min(rows - 1, Int(floor(yLo - eps))))
            let r1 = max(0, min(rows - 1, Int(floor(yHi + eps))))
            for r in r0...r1 {
                // The part of the segment inside this row's band, as an x range.
                let bandLo = max(Double(r), yLo), bandHi = min(Double(r + 1), yHi)
                var xa: Double, xb: Double
                if y1 == y0 {
                    xa = x0; xb = x1
                } else {
                    xa = x0 + (bandLo - y0) * (x1 - x0) / (y1 - y0)
                    xb = x0 + (bandHi - y0) * (x1 - x0) / (y1 - y0)
                }
                if xa > xb { swap(&xa, &xb) }
                let c0 = max(0, min(cols - 1, Int(floor(xa - eps))))
                let c1 = max(0, min(cols - 1, Int(floor(xb + eps))))
                for c in c0...c1 { visit(r * cols + c, s) }
            }
        }
    }

    /// The virtual cell (may lie outside the grid) of a position, clamped to a sane Int range.
    @inline(__always)
    func cellCoordinates(lat: Double, lon: Double) -> (col: Int, row: Int) {
        let fx = ((lon - minLon) / cellLon).rounded(.down)
        let fy = ((lat - minLat) / cellLat).rounded(.down)
        let limit = 1e9
        return (Int(max(-limit, min(limit, fx.isNaN ? 0 : fx))), Int(max(-limit, min(limit, fy.isNaN ? 0 : fy))))
    }
}
