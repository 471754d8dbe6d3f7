import Foundation
import Synchronization
import TrackHubSync

/// Drives a `Simulation` against a transport in real time: feeds it transport events and the
/// wall clock, carries out its actions, and reports its stats once a second.
///
/// Thread safety (`@unchecked Sendable`): the simulation is touched only by the thread inside
/// `run`; events arrive through the `inbox` mutex; `requestStop` may be called from anywhere.
public final class SimulationRunner: @unchecked Sendable {
    private var simulation: Simulation
    private let transport: SimulationTransport
    private let clock: @Sendable () -> Int64
    private let inbox = HubMutex<[TransportEvent]>([])
    private let stopRequested = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)

    /// The wall clock in ms since the epoch.
    public static let wallClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// A runner for `simulation` over `transport`; `clock` gives ms since the epoch (tests inject
    /// a hand-moved one). Nothing starts before `run`.
    public init(simulation: Simulation, transport: SimulationTransport, clock: @escaping @Sendable () -> Int64 = SimulationRunner.wallClock) {
        self.simulation = simulation
        self.transport = transport
        self.clock = clock
    }

    /// Asks `run` to stop (e.g. from a signal handler).
    public func requestStop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        wake.signal()
    }

    /// Runs until every rider is done, `until` says so, `deadline` (wall ms) passes or
    /// `requestStop` is called; then ends the riders' open trips and closes the transport.
    /// - Parameter status: called about once a second, and once at the end, with the stats.
    /// - Returns: the final stats.
    /// - Throws: `SimulatorError.connection` when the transport cannot start.
    public func run(
        until: (SimulationStats) -> Bool = { _ in false }, deadline: Int64? = nil,
        status: ((SimulationStats) -> Void)? = nil
    ) throws(SimulatorError) -> SimulationStats {
        try transport.start { [self] event in
            inbox.withLock { $0.append(event) }
            wake.signal()
        }
        var nextStatus = clock() + 1000
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            let now = clock()
            var actions: [SimulationAction] = []
            for event in inbox.withLock({ events in defer { events.removeAll() }; return events }) {
                actions += simulation.handle(event, now: now)
            }
            actions += simulation.advance(now: now)
            for action in actions { transport.perform(action) }
            if simulation.isFinished || until(simulation.stats) { break }
            if let deadline, now >= deadline { break }
            if now >= nextStatus {
                status?(simulation.stats)
                nextStatus = now + 1000
            }
            let waitMs = max(1, min(50, (simulation.nextDue ?? (now + 50)) - now))
            _ = wake.wait(timeout: .now() + .milliseconds(Int(waitMs)))
        }
        endOpenTrips()
        transport.stop()
        status?(simulation.stats)
        return simulation.stats
    }

    /// Ends (DELETE) every trip a rider is still on, so none is left moving on the hub.
    private func endOpenTrips() {
        for courier in simulation.couriers {
            guard let id = courier.openTripID else { continue }
            transport.perform(SimulationAction(rider: courier.rider, action: .http(HTTPCall(id: -1, method: "DELETE", path: "/v1/trips/\(id)", body: nil))))
        }
    }
}
