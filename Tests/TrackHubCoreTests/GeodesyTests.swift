import Foundation
import Testing
@testable import TrackHubCore

@Suite struct GeodesyTests {
    @Test func distanceMatchesKnownValues() {
        // One degree of latitude on the mean sphere.
        let d = Geodesy.distanceM(GeoPoint(lat: 0, lon: 0), GeoPoint(lat: 1, lon: 0))
        #expect(abs(d - 111_195.08) < 0.1)
        // Paris – London, about 343.5 km on the sphere.
        let paris = GeoPoint(lat: 48.8566, lon: 2.3522), london = GeoPoint(lat: 51.5074, lon: -0.1278)
        #expect(abs(Geodesy.distanceM(paris, london) - 343_556) < 300)
        #expect(Geodesy.distanceM(paris, paris) == 0)
    }

    @Test func bearingsOfCardinalDirections() {
        let o = GeoPoint(lat: 0, lon: 0)
        #expect(abs(Geodesy.initialBearingDeg(from: o, to: GeoPoint(lat: 1, lon: 0)) - 0) < 1e-9)
        #expect(abs(Geodesy.initialBearingDeg(from: o, to: GeoPoint(lat: 0, lon: 1)) - 90) < 1e-9)
        #expect(abs(Geodesy.initialBearingDeg(from: o, to: GeoPoint(lat: -1, lon: 0)) - 180) < 1e-9)
        #expect(abs(Geodesy.initialBearingDeg(from: o, to: GeoPoint(lat: 0, lon: -1)) - 270) < 1e-9)
    }

    @Test func destinationRoundTrip() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let a = GeoPoint(lat: rng.uniform(-70, 70), lon: rng.uniform(-179, 179))
            let bearing = rng.uniform(0, 360), dist = rng.uniform(1, 50_000)
            let b = Geodesy.destination(from: a, bearingDeg: bearing, distanceM: dist)
            #expect(abs(Geodesy.distanceM(a, b) - dist) < 1e-3)
            let back = Geodesy.initialBearingDeg(from: a, to: b)
            let diff = abs(Geodesy.normalizedBearing(back - bearing + 180) - 180)
            #expect(diff < 1e-6)
        }
    }

    @Test func normalizedBearingIsInHalfOpenRange() {
        #expect(Geodesy.normalizedBearing(-90) == 270)
        #expect(Geodesy.normalizedBearing(720) == 0)
        #expect(Geodesy.normalizedBearing(-1e-17) < 360)
        #expect(Geodesy.normalizedBearing(.nan) == 0)
    }

    @Test func localProjectionRoundTripAndScale() {
        let proj = LocalProjection(origin: Fixture.origin)
        let p = Geodesy.destination(from: Fixture.origin, bearingDeg: 37, distanceM: 5000)
        let (x, y) = proj.project(p)
        #expect(abs((x * x + y * y).squareRoot() - 5000) < 5000 * 0.005)
        let back = proj.unproject(x: x, y: y)
        #expect(abs(back.lat - p.lat) < 1e-12 && abs(back.lon - p.lon) < 1e-12)
    }
}

@Suite struct PolylineTests {
    static let google = "_p~iF~ps|U_ulLnnqC_mqNvxq`@"
    static let googlePoints = [GeoPoint(lat: 38.5, lon: -120.2), GeoPoint(lat: 40.7, lon: -120.95), GeoPoint(lat: 43.252, lon: -126.453)]

    @Test func encodesGooglesDocumentedExample() {
        #expect(Polyline.encode(Self.googlePoints) == Self.google)
    }

    @Test func decodesGooglesDocumentedExample() throws {
        let pts = try Polyline.decode(Self.google)
        #expect(pts.count == 3)
        for (a, b) in zip(pts, Self.googlePoints) {
            #expect(abs(a.lat - b.lat) < 1e-9 && abs(a.lon - b.lon) < 1e-9)
        }
    }

    @Test func malformedPolylineIsAnError() {
        #expect(throws: PolylineError.self) { try Polyline.decode("_p~iF~ps|") }  // cut short
        #expect(throws: PolylineError(offset: 0)) { try Polyline.decode(" ") }   // byte below '?'
        #expect((try? Polyline.decode("")) == [])
    }

    @Test func roundTripOfRandomPoints() throws {
        var rng = SplitMix64(seed: 3)
        let pts = (0..<100).map { _ in GeoPoint(lat: (rng.uniform(-89, 89) * 1e5).rounded() / 1e5, lon: (rng.uniform(-179, 179) * 1e5).rounded() / 1e5) }
        let back = try Polyline.decode(Polyline.encode(pts))
        for (a, b) in zip(pts, back) { #expect(abs(a.lat - b.lat) < 1e-9 && abs(a.lon - b.lon) < 1e-9) }
    }
}
