/// The simulation engine: every rider's state machine, driven by an injected clock. It turns
/// transport events into rider inputs and rider steps into actions for a transport; it never
/// sees a socket, so tests drive it with a fake hub and a hand-moved clock.
public struct Simulation: Sendable {
    /// Every rider, indexed by its `rider` number.
    public private(set) var couriers: [SimulatedCourier]
    /// The run's counters so far, updated by `advance` and `handle`.
    public private(set) var stats = SimulationStats()
    /// The settings every rider was made with.
    public let settings: SimulationSettings

    /// `settings.riders` riders; every `traceRiderEvery`-th replays a catalog trace (looping).
    public init(settings: SimulationSettings, catalog: RouteCatalog) {
        self.settings = settings
        var couriers: [SimulatedCourier] = []
        for rider in 0..<settings.riders {
            var kind = SimulatedCourier.Kind.synthetic
            if settings.traceRiderEvery > 0, (rider + 1) % settings.traceRiderEvery == 0, !catalog.traces.isEmpty {
                let trace = catalog.traces[(rider / settings.traceRiderEvery) % catalog.traces.count]
                kind = .trace(trace, repeats: true)
            }
            couriers.append(SimulatedCourier(rider: rider, kind: kind, settings: settings, catalog: catalog))
        }
        self.couriers = couriers
        stats.riders = couriers.count
    }

    /// One rider playing `track` once into one new trip (`simulate --replay`).
    public init(replay track: RecordedTrack, settings: SimulationSettings) {
        self.settings = settings
        couriers = [SimulatedCourier(rider: 0, kind: .trace(track, repeats: false), settings: settings, catalog: RouteCatalog(fixedRoutes: []))]
        stats.riders = 1
    }

    /// True when every rider is done (a replay finished, or every connection lost).
    public var isFinished: Bool { couriers.allSatisfy(\.isDone) }

    /// The earliest wall time a rider has something timed to do.
    public var nextDue: Int64? { couriers.compactMap(\.nextDue).min() }

    /// Runs every rider's due steps at `now`.
    public mutating func advance(now: Int64) -> [SimulationAction] {
        var actions: [SimulationAction] = []
        for i in couriers.indices {
            // A step may schedule another at once (e.g. connect, then nothing): loop a little.
            for _ in 0..<4 {
                let made = couriers[i].advance(now: now, stats: &stats)
                if made.isEmpty { break }
                actions += made.map { SimulationAction(rider: i, action: $0) }
            }
        }
        return actions
    }

    /// Hands a transport event to its rider.
    public mutating func handle(_ event: TransportEvent, now: Int64) -> [SimulationAction] {
        let rider = event.rider
        guard couriers.indices.contains(rider) else { return [] }
        return couriers[rider].receive(event, now: now, stats: &stats).map { SimulationAction(rider: rider, action: $0) }
    }
}
