import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// One hub alone: the trip store (SQLite in `--data`, or memory) is the log. A command is
/// judged on arrival, its result written, and answered after the commit (Hub+Commands,
/// Hub+Fixes); a failed write undoes it. Trips move on the hub's own clock, one phase of the
/// tick schedule each (PROTOCOL 6.3).
///
/// Threads: like the hub, owned by the service thread; other threads hand work in with
/// `hub.runOnServiceThread`. That is why it is `@unchecked Sendable`.
final class LocalCommandLog: CommandLog, @unchecked Sendable {
    private unowned let hub: Hub

    init(hub: Hub) {
        self.hub = hub
    }

    func restore() throws {
        try hub.restoreTrips()
    }

    func startThreads() {}
    func stopThreads() {}

    func submit(_ command: TripCommand, reply: Reply?, now: Int64) {
        if case .create = command {} else if hub.trips[command.trip] == nil {
            if let reply { hub.answerFailure(reply, .notFound("trip \(command.trip) does not exist")) }
            return
        }
        switch command {
        case .create(let id, let body, let route, _):
            guard case .http(let connection) = reply else { return }
            hub.createTrip(Hub.NewTrip(
                id: id, route: route, waypoints: body.waypoints, destination: body.destination,
                config: body.config, riderJSON: body.rider.map { TripView.riderJSON($0) }), now: now, reply: connection)
        case .fixes(let trip, let fixes):
            guard let reply else { return }
            hub.submitFixes(trip: trip, fixes: fixes, now: now, reply: reply)
        case .proceed(let trip):
            guard let reply else { return }
            hub.proceed(trip: trip, now: now, reply: reply)
        case .route(let trip, let body, let route, _):
            guard case .http(let connection) = reply else { return }
            hub.reroute(trip: trip, route: route, waypoints: body.waypoints, destination: body.destination, now: now, reply: connection)
        case .end(let trip):
            if case .http(let connection) = reply {
                hub.endTrip(trip, now: now, reply: connection)
            } else {
                hub.endTrip(trip, now: now, reply: nil)
            }
        }
    }

    func advanceTrips(now: Int64) {
        hub.tickDueTrips(now: now)
    }

    func tripStartedMoving(_ trip: String, at t: Int64) {
        // A trip already in the schedule keeps its phase: PROTOCOL 6.3 is one frame per trip
        // per tick, and moving it would send a second frame a sub-tick after the one just
        // sent. An idle trip joins the next phase.
        hub.animating.insert(trip)
    }

    func housekeeping(now: Int64) {
        hub.endArrivedTrips(now: now)
    }

    func afterAnsweredWrites(_ then: @escaping @Sendable () -> Void) {
        then()  // answered only after the commit: already readable
    }

    func connectionClosed(_ id: ConnectionID) {}

    func health(now: Int64) -> CommandLogHealth {
        hub.store.isHealthy ? .ok : .unavailable
    }

    var hasUnansweredCommands: Bool { false }  // the drain waits for store batches instead
    var movingTripCount: Int { hub.animating.count }
    var keepsRecentEvents: Bool { false }
    func metricsText(now: Int64) -> String { "" }
}
