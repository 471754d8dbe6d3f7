import Foundation
import Testing
@testable import TrackHubSimulator
import TrackHubTesting

@Suite struct LiveSimulationTests {
    static let eventKinds = ["waypoint_reached", "waypoint_resumed", "off_route", "back_on_route", "rerouted", "arrived", "ended"]

    @Test func shortSpedUpRunShowsEveryEventKindAndNoRefusedFix() throws {
        // Cadence off: the riders keep their own rhythm (a fix every 1-3 device s), dense
        // enough to show every event kind in a short run (following cadence: CourierCadenceTests).
        try withTestHub(configure: { $0.logLevel = "error"; $0.cadenceIdleMs = 0 }) { hub, _ in
            var settings = SimulationSettings()
            settings.riders = 12
            settings.speedup = 40
            settings.seed = 2024
            let simulation = Simulation(settings: settings, catalog: try RouteCatalog.load(directory: PackageRoot.samples))
            let runner = SimulationRunner(simulation: simulation, transport: try HubTransport(url: hub.webSocketURL, token: nil, useLibev: false))
            let stats = try runner.run(
                until: { stats in Self.eventKinds.allSatisfy { stats.events[$0, default: 0] > 0 } },
                deadline: SimulationRunner.wallClock() + 60_000)
            for kind in Self.eventKinds {
                #expect(stats.events[kind, default: 0] > 0, "no \(kind) event in \(stats.events)")
            }
            #expect(stats.fixesSent > 0)
            #expect(stats.refusals.isEmpty, "refused: \(stats.refusals)")
            #expect(stats.errors == 0, "\(stats.errorMessages)")
        }
    }

    /// `--protocol osmand|owntracks`: riders are phones whose fixes reach their trips, answered 200.
    @Test(arguments: [FixProtocol.osmand, .owntracks])
    func phonesDriveTheirTripsThroughTheirOwnProtocol(_ fixProtocol: FixProtocol) throws {
        try withTestHub(configure: { $0.logLevel = "error" }) { hub, _ in
            var settings = SimulationSettings()
            settings.riders = 4
            settings.speedup = 20
            settings.seed = 7
            settings.fixProtocol = fixProtocol
            // A via point's confirmation may take the whole run under a loaded test command
            // (180 device s were 9 s of wall time at 20×): this test is about the phones' fixes
            // reaching their trips, so the simulator waits as long as the run's own deadline.
            settings.confirmTimeoutS = 60 * settings.speedup
            let simulation = Simulation(settings: settings, catalog: try RouteCatalog.load(directory: PackageRoot.samples))
            let runner = SimulationRunner(simulation: simulation, transport: try HubTransport(url: hub.webSocketURL, token: nil, useLibev: false))
            let stats = try runner.run(
                until: { stats in stats.fixesApplied >= 20 && stats.events["waypoint_reached", default: 0] > 0 },
                deadline: SimulationRunner.wallClock() + 60_000)
            #expect(stats.fixesApplied >= 20, "\(stats.fixesApplied) answered 200 of \(stats.fixesSent)")
            #expect(stats.events["waypoint_reached", default: 0] > 0, "the phones' fixes move the markers: \(stats.events)")
            #expect(stats.refusals.isEmpty, "refused: \(stats.refusals)")
            #expect(stats.errors == 0, "\(stats.errorMessages)")
        }
    }
}
