import Foundation
import Testing
import TrackHubCore
@testable import TrackHubSimulator
import TrackHubTesting

@Suite struct CourierEngineTests {
    static let catalog: RouteCatalog = {
        do { return try RouteCatalog.load(directory: PackageRoot.samples) } catch { fatalError("\(error)") }
    }()

    static func settings(riders: Int = 6, speedup: Double = 30, seed: UInt64 = 7) -> SimulationSettings {
        var settings = SimulationSettings()
        settings.riders = riders
        settings.speedup = speedup
        settings.seed = seed
        settings.traceRiderEvery = 3
        return settings
    }

    static func firstFixes(seed: UInt64, count: Int) -> [String] {
        var hub = FakeHub(simulation: Simulation(settings: settings(seed: seed), catalog: catalog))
        while hub.fixes.count < count { hub.step() }
        return hub.fixes.prefix(count).map(\.text)
    }

    @Test func sameSeedGivesTheSameFixes() {
        let a = Self.firstFixes(seed: 42, count: 300)
        let b = Self.firstFixes(seed: 42, count: 300)
        #expect(a == b)
        #expect(a != Self.firstFixes(seed: 43, count: 300))
    }

    @Test func sameSeedGivesTheSameRoutesWhateverTheSpeedup() {
        // Trips come from each rider's plan generator alone: timing and speed do not change them.
        func trips(speedup: Double) -> [[String]] {
            var hub = FakeHub(simulation: Simulation(settings: Self.settings(riders: 4, speedup: speedup, seed: 9), catalog: Self.catalog))
            while (0..<4).contains(where: { (hub.createdBy[$0]?.count ?? 0) < 3 }) { hub.step(20) }
            return (0..<4).map { Array(hub.createdBy[$0]!.prefix(3)) }
        }
        let slow = trips(speedup: 20)
        #expect(slow == trips(speedup: 60))
        #expect(Set(slow.flatMap { $0 }).count > 4)
    }

    @Test func fixTimesStayWithinTheClockSkewAndIncreasePerTrip() {
        var hub = FakeHub(simulation: Simulation(settings: Self.settings(riders: 8, speedup: 80), catalog: Self.catalog))
        hub.run(forMs: 8 * 60_000, step: 20)
        #expect(hub.fixes.count > 1000)
        var last: [String: FakeHub.SentFix] = [:]
        for fix in hub.fixes {
            #expect(fix.ts <= fix.now + 300_000, "fix ts \(fix.ts) is more than 5 min ahead of \(fix.now)")
            #expect(fix.ts >= 946_684_800_000)
            if let previous = last[fix.trip] {
                #expect(fix.ts > previous.ts, "ts not increasing in \(fix.trip)")
                // PROTOCOL 6.5: never an outlier at the default max_speed_mps (70).
                let metres = Geodesy.distanceM(GeoPoint(lat: previous.lat, lon: previous.lon), GeoPoint(lat: fix.lat, lon: fix.lon))
                #expect(metres / (Double(fix.ts - previous.ts) / 1000) < 70, "implied speed too high in \(fix.trip)")
            }
            last[fix.trip] = fix
        }
        #expect(hub.simulation.stats.errors == 0, "\(hub.simulation.stats.errorMessages)")
    }

    @Test func riderWaitingAtViaPointSendsNoFixUntilItProceeds() throws {
        let start = GeoPoint(lat: 60.0, lon: 25.0)
        let end = Geodesy.destination(from: start, bearingDeg: 0, distanceM: 3000)
        let catalog = RouteCatalog(fixedRoutes: [.init(name: "north", route: try Route(points: [start, end]))])
        var settings = SimulationSettings()
        settings.riders = 1
        settings.speedup = 10
        settings.traceRiderEvery = 0
        settings.graphRouteShare = 0
        settings.waypointsPerTrip = 1...1
        settings.excursionProbability = 0
        settings.rerouteProbability = 0
        var hub = FakeHub(simulation: Simulation(settings: settings, catalog: catalog))
        while hub.trips["T1"]?.holding != true { hub.step() }
        let fixesAtHold = hub.fixes.count
        // Wait while the dwell runs: no fix, until the proceed goes out.
        while !hub.log.contains(where: { $0.text.contains(#""op":"proceed""#) }) {
            hub.step()
            #expect(hub.fixes.count == fixesAtHold)
        }
        while hub.fixes.count == fixesAtHold { hub.step() }
        #expect(hub.trips["T1"]?.visited == 1)
        while hub.trips["T1"]?.arrived != true { hub.step() }
        hub.run(forMs: 60_000)
        #expect(hub.fixesWhileStopped == 0)
        #expect(hub.simulation.stats.tripsEnded >= 1)
        #expect(hub.simulation.stats.errors == 0, "\(hub.simulation.stats.errorMessages)")
    }

    @Test func noFixIsSentWhileAnyTripIsStopped() {
        var hub = FakeHub(simulation: Simulation(settings: Self.settings(riders: 10, speedup: 40, seed: 3), catalog: Self.catalog))
        hub.run(forMs: 3 * 60_000, step: 20)
        #expect(hub.simulation.stats.tripsEnded > 5)
        #expect(hub.fixesWhileStopped == 0)
    }
}
