import Foundation
import Testing
import TrackHubCore
import TrackHubProtocol
@testable import TrackHubSimulator
import TrackHubTesting

/// `simulate --stops N` (PROTOCOL 17): trips with N stops that carry ids, names and planned
/// dwells, and a courier that waits each planned dwell before it proceeds.
@Suite struct MultiStopTripTests {
    /// One rider on a straight 6 km route, nothing random but the stops' places and dwells.
    static func straightRoute(stops: Int, speedup: Double) throws -> (SimulationSettings, RouteCatalog) {
        let start = GeoPoint(lat: 60.0, lon: 25.0)
        let end = Geodesy.destination(from: start, bearingDeg: 0, distanceM: 6000)
        let catalog = RouteCatalog(fixedRoutes: [.init(name: "north", route: try Route(points: [start, end]))])
        var settings = SimulationSettings()
        settings.riders = 1
        settings.speedup = speedup
        settings.traceRiderEvery = 0
        settings.graphRouteShare = 0
        settings.excursionProbability = 0
        settings.rerouteProbability = 0
        settings.stopsPerTrip = stops
        return (settings, catalog)
    }

    /// The `waypoints` of the first trip a rider asked for.
    static func createdStops(_ hub: FakeHub, rider: Int = 0) throws -> [JSONValue] {
        let body = try #require(hub.createdBy[rider]?.first)
        return try #require(try JSONParser().parse(Array(body.utf8))["waypoints"]?.arrayValue)
    }

    @Test func theTripHasNStopsWithIdsNamesAndDwells() throws {
        let (settings, catalog) = try Self.straightRoute(stops: 3, speedup: 10)
        var hub = FakeHub(simulation: Simulation(settings: settings, catalog: catalog))
        while hub.createdBy[0] == nil { hub.step() }
        let stops = try Self.createdStops(hub)
        #expect(stops.map { $0["id"]?.stringValue } == ["stop-1", "stop-2", "stop-3"])
        #expect(stops.allSatisfy { ($0["name"]?.stringValue ?? "").isEmpty == false })
        for stop in stops {
            let dwell = try #require(stop["dwell_s"]?.numberValue?.int64Value)
            #expect((30...180).contains(dwell))
        }
        // In route order and apart: each further north than the last, by more than 200 m.
        let lats = stops.compactMap { $0["lat"]?.doubleValue }
        #expect(lats.count == 3)
        for (a, b) in zip(lats, lats.dropFirst()) {
            #expect(Geodesy.distanceM(GeoPoint(lat: a, lon: 25), GeoPoint(lat: b, lon: 25)) > 200)
        }
    }

    @Test func theCourierWaitsEachPlannedDwellThenProceedsAndArrives() throws {
        let speedup = 10.0
        let (settings, catalog) = try Self.straightRoute(stops: 3, speedup: speedup)
        var hub = FakeHub(simulation: Simulation(settings: settings, catalog: catalog))
        while hub.trips["T1"]?.arrived != true && hub.now < 1_750_000_000_000 + 30 * 60_000 { hub.step() }
        let trip = try #require(hub.trips["T1"])
        #expect(trip.arrived)
        #expect(trip.visited == 3)
        let dwells = try Self.createdStops(hub).compactMap { $0["dwell_s"]?.numberValue?.int64Value }
        #expect(trip.reachedAt.count == 3 && trip.proceededAt.count == 3)
        for (k, dwell) in dwells.enumerated() where k < trip.proceededAt.count {
            // The wall clock runs `speedup` times faster; the hub stand-in steps 10 ms at a time.
            let waited = trip.proceededAt[k] - trip.reachedAt[k]
            let planned = Int64((Double(dwell) * 1000 / speedup).rounded())
            #expect(waited >= planned && waited <= planned + 10, "stop \(k + 1): waited \(waited) ms, planned \(planned) ms")
        }
        #expect(hub.fixesWhileStopped == 0)
        #expect(hub.simulation.stats.errors == 0, "\(hub.simulation.stats.errorMessages)")
    }

    @Test func manyRidersOnStreetRoutesVisitEveryStopWithoutErrors() {
        var settings = SimulationSettings()
        settings.riders = 6
        settings.speedup = 60
        settings.seed = 5
        settings.traceRiderEvery = 0
        settings.stopsPerTrip = 4
        var hub = FakeHub(simulation: Simulation(settings: settings, catalog: CourierEngineTests.catalog))
        hub.run(forMs: 4 * 60_000, step: 20)
        let bodies = hub.createdBy.values.flatMap { $0 }
        #expect(bodies.count >= 6)
        for body in bodies {
            let stops = (try? JSONParser().parse(Array(body.utf8))["waypoints"]?.arrayValue) ?? []
            #expect(stops.count == 4)
        }
        let arrived = hub.trips.values.filter(\.arrived)
        #expect(!arrived.isEmpty)
        #expect(arrived.allSatisfy { $0.visited == 4 })
        #expect(hub.fixesWhileStopped == 0)
        #expect(hub.simulation.stats.errors == 0, "\(hub.simulation.stats.errorMessages)")
    }

    @Test func withoutStopsTheViaPointsStayAsBefore() throws {
        // No `--stops`: plain via points, no id, name or dwell on the wire.
        var hub = FakeHub(simulation: Simulation(settings: CourierEngineTests.settings(riders: 3), catalog: CourierEngineTests.catalog))
        while (hub.createdBy.values.flatMap { $0 }).count < 3 { hub.step() }
        for body in hub.createdBy.values.flatMap({ $0 }) {
            #expect(!body.contains("dwell_s") && !body.contains("\"id\":\"stop-"))
        }
    }
}
