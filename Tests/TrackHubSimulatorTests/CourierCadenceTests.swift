import Foundation
import Testing
import TrackHubCore
@testable import TrackHubSimulator

/// Simulated couriers follow the hub's `cadence` (PROTOCOL 18), unless told to ignore it.
@Suite struct CourierCadenceTests {
    /// One synthetic rider on a long straight road with no stop for minutes, 10× real time.
    static func simulation(followsCadence: Bool) throws -> Simulation {
        let start = GeoPoint(lat: 60.0, lon: 25.0)
        let end = Geodesy.destination(from: start, bearingDeg: 0, distanceM: 40_000)
        let catalog = RouteCatalog(fixedRoutes: [.init(name: "north", route: try Route(points: [start, end]))])
        var settings = SimulationSettings()
        settings.riders = 1
        settings.speedup = 10
        settings.traceRiderEvery = 0
        settings.graphRouteShare = 0
        settings.waypointsPerTrip = 0...0
        settings.excursionProbability = 0
        settings.rerouteProbability = 0
        settings.followsCadence = followsCadence
        return Simulation(settings: settings, catalog: catalog)
    }

    /// Wall ms between the trip's successive fixes.
    static func gaps(_ hub: FakeHub) -> [Int64] {
        let times = hub.fixes.filter { $0.trip == "T1" }.map(\.now)
        return zip(times.dropFirst(), times).map { $0 - $1 }
    }

    @Test func aRiderSendsAtTheIntervalTheHubAsks() throws {
        var hub = FakeHub(simulation: try Self.simulation(followsCadence: true))
        hub.cadenceMs = 15_000  // 1.5 s of wall clock at 10×: the rider's own time
        hub.run(forMs: 30_000)
        let gaps = Self.gaps(hub)
        #expect(gaps.count >= 15)
        // From the first ack on: every gap is the asked interval (to the 10 ms step).
        #expect(gaps.allSatisfy { (1500...1510).contains($0) }, "\(gaps)")
        // Asked more often: after the next fix (which brings the new cadence), one every 200 ms.
        hub.cadenceMs = 2000
        let before = hub.fixes.count
        hub.run(forMs: 4000)
        #expect(hub.fixes.count - before >= 10)
        #expect(hub.simulation.stats.errors == 0, "\(hub.simulation.stats.errorMessages)")
    }

    @Test func aRiderToldToIgnoreCadenceKeepsItsOwnRhythm() throws {
        var hub = FakeHub(simulation: try Self.simulation(followsCadence: false))
        hub.cadenceMs = 15_000
        hub.run(forMs: 30_000)
        let gaps = Self.gaps(hub)
        // Its own rhythm: 1–3 s of device time, 100–300 ms at 10×.
        #expect(gaps.count > 90)
        #expect(gaps.allSatisfy { $0 <= 310 }, "\(gaps.filter { $0 > 310 })")
    }
}
