import Foundation
import Testing
@testable import TrackHubCore

/// Brute force nearest over every segment, in the same local frame as the index.
func bruteNearest(_ route: Route, _ p: GeoPoint) -> Double {
    let f = Route.QueryFrame(p)
    return route.points.withUnsafeBufferPointer { pts in
        (0..<route.segmentCount).map { route.project(segment: $0, in: f, points: pts).distanceSquared }.min()!.squareRoot()
    }
}

/// A random-walk route of `n` points with segments 5–150 m.
func randomRoute(_ rng: inout SplitMix64, n: Int, origin: GeoPoint = Fixture.origin) -> Route {
    var pts = [origin]
    var heading = rng.uniform(0, 360)
    for _ in 1..<n {
        heading += rng.uniform(-60, 60)
        pts.append(Geodesy.destination(from: pts[pts.count - 1], bearingDeg: heading, distanceM: rng.uniform(5, 150)))
    }
    return try! Route(points: pts)
}

@Suite struct RouteTests {
    @Test func invalidRoutesAreRejected() {
        #expect(throws: RouteError.tooFewPoints) { try Route(points: [Fixture.origin]) }
        #expect(throws: RouteError.zeroLength) { try Route(points: [Fixture.origin, Fixture.origin]) }
        #expect(throws: RouteError.invalidCoordinate(index: 1)) { try Route(points: [Fixture.origin, GeoPoint(lat: 91, lon: 0)]) }
        #expect(throws: RouteError.invalidCoordinate(index: 0)) { try Route(lonLatPairs: [[1, 2, 3], [1, 2]]) }
    }

    @Test func cumulativeDistancesAndLength() {
        let r = Fixture.eastRoute(lengthM: 1000, stepM: 100)
        #expect(r.cumulativeM[0] == 0)
        #expect(abs(r.lengthM - 1000) < 1)
        #expect(r.points.count == 11)
    }

    @Test func pointAtDistanceHitsVerticesExactlyAndClamps() {
        let r = Fixture.lShape()
        #expect(r.point(atDistance: r.cumulativeM[2]) == r.points[2])
        #expect(r.point(atDistance: r.lengthM) == r.points.last)
        #expect(r.point(atDistance: -5) == r.points[0])
        #expect(r.point(atDistance: 1e9) == r.points.last)
        #expect(abs(r.bearing(atDistance: 100) - 90) < 0.5)
        #expect(abs(r.bearing(atDistance: 700) - 0) < 0.5)
    }

    @Test func pathRunsBothWaysWithEveryVertexBetween() {
        let r = Fixture.lShape()
        let fwd = r.path(from: 100, to: 700)
        #expect(fwd.first == r.point(atDistance: 100))
        #expect(fwd.last == r.point(atDistance: 700))
        #expect(fwd.count == 4)  // the start, the vertices at 250 m and 500 m (the corner), the end
        #expect(fwd.contains(r.points[2]))
        let back = r.path(from: 700, to: 100)
        #expect(back == fwd.reversed())
        #expect(r.path(from: 300, to: 300) == [r.point(atDistance: 300)])
    }

    @Test func splitContainsCutPointInBothParts() {
        let r = Fixture.lShape()
        let (done, left) = r.split(atDistance: 600)
        #expect(done.last == left.first)
        #expect(done.first == r.points[0] && left.last == r.points.last)
        #expect(done.contains(r.points[2]))
    }

    @Test func lonLatPairsRoundTrip() throws {
        let r = Fixture.lShape()
        #expect(try Route(lonLatPairs: r.lonLatPairs) == r)
    }

    @Test func nearestMatchesBruteForceOnRandomRoutes() {
        var rng = SplitMix64(seed: 42)
        for n in [2, 3, 50, 500, 3000] {
            let r = randomRoute(&rng, n: n)
            for _ in 0..<300 {
                let c = r.point(atDistance: rng.uniform(0, r.lengthM))
                let q = Geodesy.destination(from: c, bearingDeg: rng.uniform(0, 360), distanceM: rng.uniform(0, rng.uniform(0, 1) < 0.9 ? 200 : 20_000))
                let m = r.nearest(to: q)
                #expect(abs(m.offsetM - bruteNearest(r, q)) < 1e-6)
                #expect(abs(Geodesy.distanceM(m.point, r.point(atDistance: m.alongM))) < 0.01)
            }
        }
    }

    @Test func nearestFromAlongDistanceSkipsEarlierParts() {
        let r = Fixture.outAndBack()
        let p = Fixture.at(east: 400)
        #expect(abs(r.nearest(to: p).alongM - 400) < 0.5)
        #expect(abs(r.nearest(to: p, fromAlongM: 1000).alongM - 1600) < 0.5)
    }

    @Test func candidatesAreLocalMinimaWithinTolerance() {
        // Out along y = 0, back along y = 30 m: two passes.
        let pts = [Fixture.at(east: 0), Fixture.at(east: 1000), Fixture.at(east: 1000, north: 30), Fixture.at(east: 0, north: 30)]
        let r = try! Route(points: pts)
        let q = Fixture.at(east: 500, north: 5)
        let narrow = r.candidates(near: q, toleranceM: 10)
        #expect(narrow.count == 1)
        #expect(abs(narrow[0].alongM - 500) < 0.5)
        let wide = r.candidates(near: q, toleranceM: 25)
        #expect(wide.count == 2)
        #expect(abs(wide[1].alongM - (1030 + 500)) < 0.5)
        #expect(abs(wide[1].offsetM - 25) < 0.1)
    }

    @Test func snapFollowsStreetPassedTwiceInOrder() {
        let r = Fixture.outAndBack()
        let p = Fixture.at(east: 800, north: 3)
        // Before the turn the out pass wins; from the turn on, the way back.
        #expect(abs(r.snap(p, accuracyM: 0, referenceAlongM: 0, jitterM: 30).alongM - 800) < 0.5)
        #expect(abs(r.snap(p, accuracyM: 0, referenceAlongM: 1000, jitterM: 30).alongM - 1200) < 0.5)
        // Past every candidate: the last one before the reference.
        #expect(abs(r.snap(p, accuracyM: 0, referenceAlongM: 1900, jitterM: 30).alongM - 1200) < 0.5)
        // Within the jitter threshold behind the marker still counts as "at or after".
        #expect(abs(r.snap(p, accuracyM: 0, referenceAlongM: 820, jitterM: 30).alongM - 800) < 0.5)
    }

    @Test func routeCodableEncodesPointsOnly() throws {
        let r = Fixture.lShape()
        let data = try JSONEncoder().encode(r)
        #expect(try JSONDecoder().decode([GeoPoint].self, from: data) == r.points)
        #expect(try JSONDecoder().decode(Route.self, from: data) == r)
    }
}
