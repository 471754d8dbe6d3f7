import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubRouting

/// Routes the hub finds (PROTOCOL 16): trips from their stops alone, `GET /v1/route`, and a
/// new route when a rider strays. Every search runs on the router's queue (`RouterQueue`,
/// off the service thread, at most 1 000 waiting); its result comes back here, on the
/// service thread, and a route found goes through the command log like a client's route.
///
/// Threads: owned by the service thread. The router's queue calls back with closures that
/// capture this object only to hand the result to the service thread (`inbox`), where every
/// field is read; that is why it is `@unchecked Sendable`.
final class RouteSearches: @unchecked Sendable {
    /// An HTTP client waiting for a search: its connection (closed: the search is dropped
    /// unrun) and its address (whose share of the queue it counts against).
    struct SearchClient {
        var connection: ConnectionID
        var peer: String
    }

    /// The HTTP clients of searches on the router's queue, so a search whose client has gone
    /// is dropped unrun (PROTOCOL 16).
    let clients = RouteSearchClients()
    /// Hands a command to the command log (`CommandLog.submit`), as a client's would be.
    /// Set by the hub once it is built: the log is made lazily, after the services, and
    /// needs the hub.
    var submit: (_ command: TripCommand, _ reply: Reply?, _ now: Int64) -> Void = { _, _, _ in
        preconditionFailure("RouteSearches.submit is set by the hub")
    }
    /// `--max-trips` (PROTOCOL 1), checked again when a search for a new trip is back.
    /// Set by the hub with `submit`.
    var checkTripCapacity: () throws(ProtocolError) -> Void = {
        preconditionFailure("RouteSearches.checkTripCapacity is set by the hub")
    }

    /// `--router routino:DIR`; nil: the hub finds no routes.
    private let router: RouterQueue?
    /// `--max-route-points` and the limits a found route's request body is rebuilt within.
    private let config: HubConfig
    /// Now, when a reroute's search is back.
    private let clock: HubClock
    /// The trips, for a reroute's search points and its one-at-a-time marks.
    private let trips: TripTable
    /// The answers to the HTTP clients.
    private let replies: Replies
    /// The router's counters.
    private let metrics: HubMetrics
    /// How a search's result comes back to the service thread.
    private let inbox: ServiceThreadInbox

    /// The searches of a hub with these parts, on `router` (nil: the hub finds no routes).
    init(config: HubConfig, router: RouterQueue?, clock: HubClock, trips: TripTable, replies: Replies, metrics: HubMetrics, inbox: ServiceThreadInbox) {
        self.router = router
        self.config = config
        self.clock = clock
        self.trips = trips
        self.replies = replies
        self.metrics = metrics
        self.inbox = inbox
    }

    /// Whether this hub finds routes at all (a trip's `auto_reroute` defaults to it).
    var hasRouter: Bool { router != nil }

    /// Runs a search off the service thread; `then` runs on the service thread with the
    /// result. A full queue (or no router) answers `unavailable` at once, a client past its
    /// share of the queue `rate_limited`; a search not started within 10 s is `unavailable`,
    /// and one whose client has gone is dropped unrun (PROTOCOL 16). `client` nil: the hub's
    /// own search (a reroute).
    func searchRoute(_ query: RouteQuery, client: SearchClient? = nil, then: @escaping @Sendable (Result<FoundRoute, RouterError>) -> Void) {
        guard let router else { return then(.failure(.unavailable("this hub has no router"))) }
        if query.points.count > router.router.maxPoints {
            return then(.failure(.tooManyPoints(limit: router.router.maxPoints)))
        }
        let interest = client.map { clients.add($0.connection) }
        let refusal = router.search(query, owner: client?.peer, isWanted: { interest?.isWanted ?? true }) { [self] result, skipped, seconds in
            inbox.run { [self] in
                if let interest, let client { clients.remove(interest, of: client.connection) }
                if let skipped {
                    metrics.routerSkipped(skipped)
                    if skipped == .abandoned { return }  // nobody to answer
                } else {
                    metrics.routerSearched(result, seconds: seconds)
                }
                then(result)
            }
        }
        guard let refusal else { return }
        if let interest, let client { clients.remove(interest, of: client.connection) }
        switch refusal {
        case .queueFull:
            metrics.routerSearches["unavailable", default: 0] += 1
            then(.failure(.unavailable("the router's queue is full (\(router.limit) searches waiting); try again")))
        case .ownerShareFull:
            metrics.routerSearches["rate_limited", default: 0] += 1
            then(.failure(.rateLimited("\(client?.peer ?? "this client") has \(router.perOwnerLimit) searches queued, its share of the router's queue; try again once they are answered")))
        }
    }

    /// `POST /v1/trips` with `origin` (PROTOCOL 16): the route from origin through the
    /// waypoints to the destination, then the create as if the client had given that route,
    /// `route_source: "router"`. Without a router: 400 naming `route`.
    func createTripFromStops(id: String, _ body: CreateTripRequest, rawBody: [UInt8], reply: Reply, client: SearchClient?) throws(ProtocolError) {
        guard let origin = body.origin, let destination = body.destination else { return }
        guard router != nil else {
            throw .badRequest("route: this hub has no router (give route or route_polyline, or start the hub with --router routino:DIR)")
        }
        let stops = body.waypoints.count
        let mode = body.config.mode
        searchRoute(RouteQuery(points: [origin] + body.waypoints + [destination], mode: mode), client: client) { [self] result in
            do throws(ProtocolError) {
                let found = try result.mapError { Self.routerProblem($0, mode: mode, name: { Self.tripPointName($0, stops: stops) }) }.get()
                let route = try foundRoute(found, lastField: "destination")
                var request = body
                request.origin = nil
                request.route = .points(found.path)
                try checkTripCapacity()
                let raw = CreateTripRequest.bodyWithFoundRoute(rawBody, route: found.path, limits: config.protocolLimits)
                submit(
                    .create(id: id, request, route: route, rawBody: raw, found: RouterTravel(durationS: found.durationS)),
                    reply, clock.wallMillis())
            } catch {
                replies.answerFailure(reply, error)
            }
        }
    }

    /// `GET /v1/route` (PROTOCOL 16): `{route, distance_m, duration_s}`, no trip made.
    func findRouteHTTP(_ connection: ConnectionID, _ query: RouteSearchQuery, peer: String) throws(ProtocolError) {
        guard router != nil else { throw .badRequest("route: this hub has no router (start it with --router routino:DIR)") }
        let stops = query.via.count
        searchRoute(RouteQuery(points: query.points, mode: query.mode), client: SearchClient(connection: connection, peer: peer)) { [self] result in
            switch result {
            case .success(let found):
                replies.respond(connection, status: 200, json: HTTPBodies.foundRoute(path: found.path, distanceM: found.lengthM, durationS: found.durationS))
            case .failure(let error):
                replies.respondError(connection, Self.routerProblem(error, mode: query.mode, name: { i in
                    i == 0 ? "from" : i == stops + 1 ? "to" : "via[\(i - 1)]"
                }))
            }
        }
    }

    /// PROTOCOL 16 auto-reroute, after a trip's fixes were applied: when the trip decides a
    /// search is due (`Trip.rerouteSearchPoints`), one search at a time per trip; a route
    /// found is submitted as the hub's own `PUT .../route` (reason `off_route`) if the trip is
    /// still off its route by then; a failure waits 10 s before the next try.
    func considerAutoReroute(trip id: String, now: Int64) {
        guard router != nil, let entry = trips[id], !entry.rerouteSearching,
            let points = entry.trip.rerouteSearchPoints(now: now, lastFailureAt: entry.rerouteFailedAt)
        else { return }
        _ = trips.mutate(id) { $0.rerouteSearching = true }
        let mode = entry.trip.config.mode
        searchRoute(RouteQuery(points: points, mode: mode)) { [self] result in
            let now = clock.wallMillis()
            switch result {
            case .failure(let error):
                _ = trips.mutate(id) {
                    $0.rerouteSearching = false
                    $0.rerouteFailedAt = now
                }
                HubLog.info("trip \(id): no new route found (\(error)); tried again at a later off-route fix after 10 s")
            case .success(let found):
                _ = trips.mutate(id) {
                    $0.rerouteSearching = false
                    $0.rerouteFailedAt = nil
                }
                guard let trip = trips[id]?.trip, trip.status == .offRoute, let route = try? Route(points: found.path) else { return }
                let request = RerouteRequest(route: .points(found.path), waypoints: nil, destination: trip.destination)
                submit(
                    .route(
                        trip: id, request, route: route, rawBody: RerouteRequest.body(route: found.path, destination: trip.destination),
                        reason: .offRoute, found: RouterTravel(durationS: found.durationS)),
                    nil, now)
            }
        }
    }

    /// The core route of a found path; a path of zero length (every point at the same
    /// place on the road) is 400 naming the last point's field.
    private func foundRoute(_ found: FoundRoute, lastField: String) throws(ProtocolError) -> Route {
        if found.path.count > config.maxRoutePoints {
            throw .tooLarge("route: the route found has \(found.path.count) points; the limit is \(config.maxRoutePoints)")
        }
        do {
            return try Route(points: found.path)
        } catch {
            throw .badRequest("\(lastField): the route found has zero length (every point is at the same place on the road)")
        }
    }

    /// The field of point `i` of a trip's search: `origin`, `waypoints[i]`, `destination`.
    static func tripPointName(_ i: Int, stops: Int) -> String {
        i == 0 ? "origin" : i == stops + 1 ? "destination" : "waypoints[\(i - 1)]"
    }

    /// A router's failure as the client hears it (PROTOCOL 16): 400 naming the point, 503
    /// when the search could not run.
    static func routerProblem(_ error: RouterError, mode: TravelMode, name: (Int) -> String) -> ProtocolError {
        switch error {
        case .tooFarFromRoad(let index, let distance):
            let how = distance.map { "is \(Int($0.rounded())) m from" } ?? "is not within 500 m of"
            return .badRequest("\(name(index)) \(how) the nearest road for \(mode.rawValue) (the limit is 500 m)")
        case .noPath(let index):
            return .badRequest("\(name(index)): no \(mode.rawValue) route leads there from \(name(index - 1))")
        case .unavailable(let why):
            return ProtocolError(.unavailable, "route: \(why)")
        case .rateLimited(let why):
            return .rateLimited("route: \(why)")
        case .failed(let why):
            return ProtocolError(.unavailable, "route: the router failed (\(why))")
        case .tooManyPoints(let limit):
            return .tooLarge("waypoints: the router routes through at most \(limit) points, origin and destination included")
        }
    }
}
