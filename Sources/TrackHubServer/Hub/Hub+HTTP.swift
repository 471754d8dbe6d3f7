import Foundation
import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// The HTTP side of the hub: the API of PROTOCOL section 5, health, metrics and the web client.
extension Hub {
    func httpRequest(_ request: HTTPRequest) {
        metrics.httpRequests += 1
        let now = wallClockMillis()
        if !originPolicy.allowsHost(request.host) {
            respondError(request.connection, ProtocolError(.forbidden, "Host \(request.host ?? "") is not this hub's address; an open hub answers only its listen address, localhost, loopback addresses and --allow-host names"))
            return
        }
        if !originPolicy.allowsOrigin(request.origin, host: request.host) {
            respondError(request.connection, ProtocolError(.forbidden, "Origin \(request.origin ?? "") is not allowed"))
            return
        }
        let path = request.path
        if path == "/healthz" { return respondHealth(request) }
        if path == "/metrics" {
            let clusterGauges = cluster.map { (up: $0.isHealthy, lagMs: $0.watermark == .min ? -1 : now - $0.watermark) }
            let unsent = sessions.values.reduce(0) { $0 + $1.queue.unsentBytes }
            let text = metrics.render(
                trips: trips.count, movingTrips: cluster?.moving.count ?? animating.count, draining: draining,
                unsentBytes: unsent, cluster: clusterGauges)
            return respond(request.connection, HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Array(text.utf8)))
        }
        if path.hasPrefix("/v1/") {
            do {
                try routeAPI(request, now: now)
            } catch {
                respondError(request.connection, error)
            }
            return
        }
        serveWebClient(request)
    }

    func httpRefused(_ request: HTTPRequest, reason: HTTPRefusalReason) {
        metrics.httpRequests += 1
        metrics.httpRefusals[reason.rawValue, default: 0] += 1
    }

    private func respondHealth(_ request: HTTPRequest) {
        let status: String
        if draining {
            status = "draining"
        } else if !store.isHealthy || cluster?.isHealthy == false {
            status = "unavailable"
        } else if let cluster, !cluster.isCaughtUp(now: wallClockMillis()) {
            status = "catching_up"  // cluster mode: still replaying the log
        } else {
            status = "ok"
        }
        let body = HTTPBodies.health(status: status, trips: trips.count, connections: sessions.count, server: serverName)
        respond(request.connection, status: status == "ok" ? 200 : 503, json: body)
    }

    /// `/v1/...` routes, matched once against the route table (`APIRoute`). Throws the error
    /// to answer with. Order (PROTOCOL 4 and 14): a preflight and the API description need no
    /// token; then 401; then 404 / 405 / a bad trip id (400); then the route's scope (403,
    /// after the request's own 400 / 413); then the route itself (404, 409).
    private func routeAPI(_ request: HTTPRequest, now: Int64) throws(ProtocolError) {
        let match = APIRoute.match(method: request.method, path: request.path)
        switch match {
        case .preflight(let allowed):
            return respond(request.connection, CORS.preflight(allowed: allowed))
        case .route(.openAPI):
            return respond(request.connection, HTTPResponse(
                status: 200, headers: [("cache-control", "no-cache")], body: OpenAPIDocument.json(server: serverName)))
        case .notFound where request.method == .options:
            throw .notFound("no route for OPTIONS \(request.path)")
        default:
            break
        }
        let grants = try authenticateHTTPIfSecured(request, now: now)  // PROTOCOL 2: 401
        let route: APIRoute
        switch match {
        case .route(let matched):
            route = matched
        case .methodNotAllowed(let allowed):
            let allow = APIRoute.allowHeader(allowed)
            let error = ProtocolError(.notFound, "method \(request.method.rawValue) is not allowed on \(request.path); Allow: \(allow)")
            metrics.errorsOut[error.code.rawValue, default: 0] += 1
            return respond(request.connection, HTTPResponse(
                status: 405, headers: [("allow", allow), ("cache-control", "no-store")], body: HTTPBodies.error(error)))
        case .badTripID(let id):
            throw .badRequest("id: trip id \(id) is not a valid id")
        case .notFound, .preflight:
            throw .notFound("no route for \(request.method.rawValue) \(request.path)")
        }
        guard var query = try? QueryString.parse("") else { throw .badRequest("query string") }
        query.items = request.query
        try authorizeHTTP(route, request, query: query, grants: grants, now: now)  // PROTOCOL 2: 403
        try dispatch(route, request, query: query, grants: grants, now: now)
    }

    private func dispatch(_ route: APIRoute, _ request: HTTPRequest, query: QueryString, grants: Grants, now: Int64) throws(ProtocolError) {
        let connection = request.connection
        switch route {
        case .listTrips:
            return listTrips(connection, try TripListQuery.parse(query), now: now, visible: grants)
        case .createTrip:
            let body = try CreateTripRequest.decode(request.body, limits: config.protocolLimits)
            try checkTripCapacity()
            if cluster != nil {
                return try appendCreate(body, rawBody: request.body, now: now, reply: connection)
            }
            return createTrip(NewTrip(
                id: body.id, route: try makeRoute(body.route), waypoints: body.waypoints, destination: body.destination,
                config: body.config, riderJSON: body.rider.map { riderBytes($0) }), now: now, reply: connection)
        case .fleetClusters:
            return try fleetClustersHTTP(connection, try ClustersQuery.parse(query), now: now)
        case .openAPI:
            return  // answered before the token check
        case .getTrip(let id), .endTrip(let id), .putRoute(let id), .postFixes(let id), .proceed(let id), .trail(let id):
            if cluster != nil, request.method != .get {
                // Cluster mode: whether the trip exists is decided in log order (Hub+ClusterApply).
                return try routeTripCommandToLog(route, request, now: now)
            }
            guard trips[id] != nil else { throw .notFound("trip \(id) does not exist") }
            try dispatchTrip(route, id: id, request, query: query, now: now)
        }
    }

    private func dispatchTrip(_ route: APIRoute, id: String, _ request: HTTPRequest, query: QueryString, now: Int64) throws(ProtocolError) {
        let connection = request.connection
        switch route {
        case .getTrip:
            respondTrip(connection, id: id, status: 200)
        case .endTrip:
            endTrip(id, now: now, reply: connection)
        case .putRoute:
            let body = try RerouteRequest.decode(request.body, limits: config.protocolLimits)
            guard let route = try makeRoute(body.route) else { throw .badRequest("route is required") }
            reroute(trip: id, route: route, waypoints: body.waypoints, destination: body.destination, now: now, reply: connection)
        case .postFixes:
            let body = try FixBatchRequest.decode(request.body, limits: config.protocolLimits, now: now)
            metrics.fixesIn += body.fixes.count
            if body.fixes.isEmpty {
                respond(connection, status: 200, json: HTTPBodies.noAcks)
            } else {
                submitFixes(trip: id, fixes: body.fixes, now: now, reply: .http(connection))
            }
        case .proceed:
            proceed(trip: id, now: now, reply: .http(connection))
        case .trail:
            let trail = try TrailQuery.parse(query)
            let format = try TrailFormat.parse(query)
            if cluster != nil {
                // Cluster mode acks a fix once Redis has it, before this node's own copy of the
                // trail is written: read it after every write queued so far (an empty batch
                // completes after them), so an acked fix is always in the trail.
                persist([]) { [self] _ in respondTrail(connection, id: id, trail, format: format) }
            } else {
                respondTrail(connection, id: id, trail, format: format)
            }
        case .listTrips, .createTrip, .fleetClusters, .openAPI:
            break
        }
    }

    /// Turns a validated route input into a core `Route`, with errors naming the field.
    func makeRoute(_ input: RouteInput?) throws(ProtocolError) -> Route? {
        guard let input else { return nil }
        let points: [GeoPoint]
        let field: String
        switch input {
        case .points(let given):
            points = given
            field = "route"
        case .polyline(let text):
            field = "route_polyline"
            do {
                points = try Polyline.decode(text)
            } catch {
                throw .badRequest("route_polyline is not a valid encoded polyline (at character \(error.offset))")
            }
        }
        if points.count > config.maxRoutePoints {
            throw .tooLarge("\(field) has \(points.count) points; the limit is \(config.maxRoutePoints)")
        }
        do {
            return try Route(points: points)
        } catch {
            switch error {
            case .tooFewPoints: throw .badRequest("\(field) needs at least 2 points")
            case .zeroLength: throw .badRequest("\(field) has zero length")
            case .invalidCoordinate(let index): throw .badRequest("\(field)[\(index)] is not a valid coordinate")
            }
        }
    }

    func riderBytes(_ rider: JSONValue) -> [UInt8] {
        TripView.riderJSON(rider)
    }

    private func listTrips(_ connection: ConnectionID, _ query: TripListQuery, now: Int64, visible: Grants = .everything) {
        let wanted = query.statuses.map(Set.init)
        // Bytewise order of ids (PROTOCOL 5), the same as comparing their UTF-8.
        let ids = trips.keys.filter { id in
            guard visible.allowsListing(id) else { return false }
            if let after = query.after, !id.utf8.lexicographicallyPrecedes(after.utf8) && id != after {
                // keep ids strictly after `after`
            } else if query.after != nil {
                return false
            }
            guard let status = trips[id]?.trip.status else { return false }
            return wanted?.contains(status) ?? true
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let page = ids.prefix(query.limit)
        let views = page.map { TripView(id: $0, entry: trips[$0], trail: [], now: now, includeRoute: false, includeTrail: false) }
        respond(connection, status: 200, json: HTTPBodies.tripList(views, next: ids.count > page.count ? page.last : nil))
    }

    func respondTrip(_ connection: ConnectionID, id: String, status: Int) {
        let trail = (try? store.recentFixes(tripID: id, count: 100)) ?? []
        let body = HTTPBodies.trip(TripView(id: id, entry: trips[id], trail: trail, now: wallClockMillis()))
        if status == 201 { return respondCreated(connection, id: id, json: body) }
        respond(connection, status: status, json: body)
    }

    /// The trail (PROTOCOL 5 and 14): GeoJSON, GPX or CSV, streamed page by page when it is
    /// longer than one page; a trail that fits in one page goes out whole, with its length.
    private func respondTrail(_ connection: ConnectionID, id: String, _ query: TrailQuery, format: TrailFormat) {
        let body: TrailBody
        let first: [UInt8]
        do {
            switch format {
            case .geojson: body = .json(try TrailStream(store: store, tripID: id, query: query))
            case .gpx, .csv: body = .rows(try TrailExportStream(store: store, tripID: id, query: query, format: format, server: serverName))
            }
            first = body.fitsInOnePage ? try body.wholeBody() : try body.nextChunk() ?? []
        } catch {
            respondError(connection, ProtocolError(.unavailable, "trail: \(error)"))
            return
        }
        var headers = [("cache-control", "no-store")]
        if let name = format.attachmentName(trip: id) {
            headers.append(("content-disposition", "attachment; filename=\"\(name)\""))
        }
        var response = HTTPResponse(status: 200, contentType: format.contentType, headers: headers, body: first)
        if !body.fitsInOnePage { response.next = { try body.nextChunk() } }
        respond(connection, response)
    }

    // MARK: - Responses

    func respond(_ connection: ConnectionID, status: Int, json: [UInt8]) {
        respond(connection, HTTPResponse(status: status, headers: [("cache-control", "no-store")], body: json))
    }

    func respond(_ connection: ConnectionID, _ response: HTTPResponse) {
        host.respond(connection, response)
    }

    /// `201` with the trip and its `Location` (PROTOCOL 14).
    func respondCreated(_ connection: ConnectionID, id: String, json: [UInt8]) {
        respond(connection, HTTPResponse(status: 201, headers: [("cache-control", "no-store"), ("location", "/v1/trips/\(id)")], body: json))
    }

    /// Headers on every answer (the host's refusals included): CORS for an allowed origin.
    func responseHeaders(for request: HTTPRequest) -> [(name: String, value: String)] {
        CORS.responseHeaders(origin: request.origin, host: request.host, policy: originPolicy)
    }

    func respondError(_ connection: ConnectionID, _ error: ProtocolError) {
        metrics.errorsOut[error.code.rawValue, default: 0] += 1
        respond(connection, status: error.code.httpStatus, json: HTTPBodies.error(error))
    }
}

