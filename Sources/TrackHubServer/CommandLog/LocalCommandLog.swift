import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// One hub alone: the trip store (SQLite in `--data`, or memory) is the log. A command is
/// judged on arrival, its result written, and answered after the commit (+Commands,
/// +Fixes); a failed write undoes it. Trips move on the hub's own clock, one phase of the
/// tick schedule each (PROTOCOL 6.3).
///
/// Threads: like the hub, owned by the service thread; other threads hand work in with
/// `services.inbox.run`. That is why it is `@unchecked Sendable`.
final class LocalCommandLog: CommandLog, @unchecked Sendable {
    let services: HubServices
    /// Per trip with fixes on their way to the store (idle trips hold none): bounded by the
    /// trips, each by `maxWaitingFixesPerTrip`.
    var fixQueues: [String: FixQueue] = [:]

    init(services: HubServices) {
        self.services = services
        // A fix received and on its way to the store has arrived: its trip is not silent.
        services.signals.hasFixesInFlight = { [weak self] trip in self?.fixQueues[trip] != nil }
    }

    func restore() throws {
        try services.storage.restoreTrips(now: services.clock.wallMillis())
        services.signals.watchAll()  // judged from the stored last_fix_t (PROTOCOL 18)
        try services.devices.restoreDevices()
        try services.shares.restoreShares()
    }

    func startThreads() {}
    func stopThreads() {}

    func submit(_ command: TripCommand, reply: Reply?, now: Int64) {
        if case .create = command {} else if services.trips[command.trip] == nil {
            if let reply { services.replies.answerFailure(reply, .notFound("trip \(command.trip) does not exist")) }
            return
        }
        switch command {
        case .create(let id, let body, let route, _, let found):
            guard case .http(let connection) = reply else { return }
            create(id: id, body, route: route, found: found, now: now, reply: connection)
        case .fixes(let trip, let fixes):
            guard let reply else { return }
            submitFixes(trip: trip, fixes: fixes, now: now, reply: reply)
        case .proceed(let trip):
            guard let reply else { return }
            proceed(trip: trip, now: now, reply: reply)
        case .route(let trip, let body, let route, _, let reason, let found):
            reroute(
                trip: trip, route: route, waypoints: body.waypoints, destination: body.destination, stops: body.stops,
                reason: reason, found: found, now: now, reply: reply)
        case .end(let trip):
            end(trip: trip, now: now, reply: reply)
        }
    }

    func advanceTrips(now: Int64) {
        services.animator.tickDueTrips(now: now)
    }

    func tripStartedMoving(_ trip: String, at t: Int64, byFix: Bool) {
        // An idle trip joins the next phase. A trip already in the schedule keeps its phase
        // for now (PROTOCOL 6.3: one frame per trip per tick; moving it at once would send a
        // second frame a sub-tick after the one just sent); after a fix it may move later
        // to where its courier's fixes land (TickSchedule.follow).
        if byFix {
            services.trips.animating.follow(trip)
        } else {
            services.trips.animating.insert(trip)
        }
    }

    func housekeeping(now: Int64) {
        // PROTOCOL 5: an arrived trip ends by itself `--end-after` after arriving.
        for id in services.trips.arrived(atOrBefore: now - services.config.endAfterMs) {
            end(trip: id, now: now, reply: nil)
        }
    }

    func afterAnsweredWrites(_ then: @escaping @Sendable () -> Void) {
        then()  // answered only after the commit: already readable
    }

    func connectionClosed(_ id: ConnectionID) {}

    func health(now: Int64) -> CommandLogHealth {
        services.storage.store.isHealthy ? .ok : .unavailable
    }

    var hasUnansweredCommands: Bool { false }
    var appliesCommandsOnArrival: Bool { true }  // the drain waits for store batches instead
    var movingTripCount: Int { services.trips.animating.count }

    func webhookPositions() -> (keeper: any WebhookPositionKeeper, scope: WebhookScope?) {
        (StoreWebhookPositions(store: services.storage.store), nil)
    }

    func usingTrip(_ trip: String, reply: Reply, now: Int64, _ then: @escaping () -> Void) { then() }
    func fleetMembers(_ local: [FleetMember], now: Int64) -> [FleetMember] { local }
    /// A hub alone: there is no other hub to watch a trip.
    func watchedElsewhere(_ here: Set<String>, version: UInt64, now: Int64) -> CadenceService.Elsewhere? { nil }
    var keepsRecentEvents: Bool { false }
    func metricsText(now: Int64) -> String {
        PrometheusText.metric(
            "trackhub_tick_phase_moves_total", "counter",
            "Moving trips moved to the tick phase where their courier's fixes land (one longer gap between their frames each).",
            Double(services.trips.animating.phaseMoves))
            + PrometheusText.metric(
                "trackhub_trips_dozing", "gauge",
                "Moving trips that skip their ticks for now: nobody takes their frames and no tick before a time could find an event (counted in trackhub_trips_moving too).",
                Double(services.trips.animating.dozingCount))
    }
}
