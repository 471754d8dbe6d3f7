import Foundation
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// The HTTP side of the hub: the API of PROTOCOL section 5, health, metrics and the web client.
extension Hub {
    func httpRequest(_ request: HTTPRequest) {
        services.metrics.httpRequests += 1
        let now = services.clock.wallMillis()
        // The address's bucket first: a dictionary look-up, and nothing at all when the limit is off.
        if let refusal = services.access.refusals.refusal(for: request.peerAddress, now: now), services.access.apiGate.needsCredential(request) {
            return services.replies.respondError(request.connection, refusal)  // --max-refusal-rate: not checked at all
        }
        if request.isSecondListener { return osmandListenerRequest(request, now: now) }
        if !services.access.originPolicy.allowsHost(request.host) {
            services.replies.respondError(request.connection, ProtocolError(.forbidden, "Host \(request.host ?? "") is not this hub's address; an open hub answers only its listen address, localhost, loopback addresses and --allow-host names"))
            return
        }
        if !services.access.originPolicy.allowsOrigin(request.origin, host: request.host) {
            services.replies.respondError(request.connection, ProtocolError(.forbidden, "Origin \(request.origin ?? "") is not allowed"))
            return
        }
        let path = request.path
        if path == "/healthz" { return respondHealth(request) }
        if path == "/metrics" {
            let text = services.metrics.render(
                trips: services.trips.count, movingTrips: commands.movingTripCount, draining: draining,
                delivery: services.fanout.counters, subscriptions: services.fanout.subscriptions.count, unsentBytes: services.fanout.unsentBytes,
                commandLog: commands.metricsText(now: now) + webhookMetricsText)
            return services.replies.respond(request.connection, HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Array(text.utf8)))
        }
        if path.hasPrefix("/v1/") {
            do {
                try routeAPI(request, now: now)
            } catch {
                services.replies.respondError(request.connection, error)
            }
            return
        }
        serveWebClient(request)
    }

    /// `--osmand-listen` (PROTOCOL 11): only the OsmAnd protocol, at `/` (Traccar Client's
    /// server URL has no path). Phones send their server's name as `Host`, and the port
    /// reaches nothing but device fixes, so the open hub's Host check does not apply here.
    private func osmandListenerRequest(_ request: HTTPRequest, now: Int64) {
        guard request.path == "/" || request.path == "/v1/osmand" else {
            services.metrics.deviceRefusals[ErrorCode.notFound.rawValue, default: 0] += 1
            return services.replies.respondError(request.connection, .notFound("this port serves only the OsmAnd protocol at /"))
        }
        var osmand = request
        osmand.path = "/v1/osmand"
        do {
            try routeAPI(osmand, now: now)
        } catch {
            services.replies.respondError(request.connection, error)
        }
    }

    func httpRefused(_ request: HTTPRequest, reason: HTTPRefusalReason) {
        services.metrics.httpRequests += 1
        services.metrics.httpRefusals[reason.rawValue, default: 0] += 1
    }

    private func respondHealth(_ request: HTTPRequest) {
        let status: String
        if draining {
            status = "draining"
        } else if !services.storage.store.isHealthy {
            status = "unavailable"
        } else {
            switch commands.health(now: services.clock.wallMillis()) {
            case .ok: status = "ok"
            case .unavailable: status = "unavailable"
            case .catchingUp: status = "catching_up"
            case .degraded: status = "degraded"
            }
        }
        let body = HTTPBodies.health(status: status, trips: services.trips.count, connections: services.fanout.count, server: TrackHubVersion.serverName)
        // `degraded` still serves: a load balancer keeps the hub in rotation.
        services.replies.respond(request.connection, status: status == "ok" || status == "degraded" ? 200 : 503, json: body)
    }

    /// `/v1/...` routes: admitted by the gate (`APIGate`: 401, 404, 405, 400, 413, 403 in
    /// PROTOCOL 4's order), then carried out; what only the trip can tell (404, 409) comes
    /// from the command log or the route itself.
    private func routeAPI(_ request: HTTPRequest, now: Int64) throws(ProtocolError) {
        // Identity before work (PROTOCOL 11): a phone's device, once the body is in, is
        // looked up before the body is parsed (an id in the query or path was looked up
        // before the body was read, `httpRefusalBeforeBody`).
        if DeviceService.isDeviceEndpoint(request.path),
           case .route(let route) = APIRoute.match(method: request.method, path: request.path), route.kind.access == .device,
           let id = DeviceDoor.device(request, route: route), services.devices.isSurelyUnknownDevice(id) {
            services.metrics.deviceRefusals[ErrorCode.notFound.rawValue, default: 0] += 1
            throw .notFound("device \(id) is not registered")
        }
        switch services.access.apiGate.decide(request, now: now) {
        case .preflight(let allowed):
            services.replies.respond(request.connection, CORS.preflight(allowed: allowed))
        case .openAPI:
            services.replies.respond(request.connection, HTTPResponse(
                status: 200, headers: [("cache-control", "no-cache")], body: OpenAPIDocument.json(server: TrackHubVersion.serverName)))
        case .methodNotAllowed(let error, let allow):
            services.metrics.errorsOut[error.code.rawValue, default: 0] += 1
            services.replies.respond(request.connection, HTTPResponse(
                status: 405, headers: [("allow", allow), ("cache-control", "no-store")], body: HTTPBodies.error(error)))
        case .refused(let error):
            if DeviceService.isDeviceEndpoint(request.path) { services.metrics.deviceRefusals[error.code.rawValue, default: 0] += 1 }
            throw error
        case .call(let call, let grants):
            try dispatch(call, connection: request.connection, peer: request.peerAddress, grants: grants, now: now)
        }
    }

    private func dispatch(_ call: APICall, connection: ConnectionID, peer: String, grants: Grants, now: Int64) throws(ProtocolError) {
        var call = call
        if case .createTrip(let body, let route, let rawBody) = call, body.id == nil {
            // The id is chosen here, so the trip's partition is known before it is submitted.
            var named = body
            named.id = services.tripsAPI.makeTripID()
            call = .createTrip(named, route: route, rawBody: rawBody)
        }
        guard let trip = Self.trip(namedBy: call) else { return try dispatchNow(call, connection: connection, peer: peer, grants: grants, now: now) }
        // PROTOCOL 15: a request about a trip is answered once this hub applies its partition.
        commands.usingTrip(trip, reply: .http(connection), now: now) { [self] in
            do throws(ProtocolError) {
                try dispatchNow(call, connection: connection, peer: peer, grants: grants, now: now)
            } catch {
                services.replies.respondError(connection, error)
            }
        }
    }

    /// The trip a call is about, if any (a device fix's trip is found later, from the device).
    static func trip(namedBy call: APICall) -> String? {
        switch call {
        case .createTrip(let body, _, _): return body.id
        case .getTrip(let id), .endTrip(let id), .postFixes(let id, _), .proceed(let id), .trail(let id, _, _), .createShare(let id, _):
            return id
        case .putRoute(let id, _, _, _): return id
        case .putDevice(_, let body): return body.trip
        case .listTrips, .fleetClusters, .openAPI, .listDevices, .getDevice, .deleteDevice, .deviceFix, .revokeShare, .findRoute:
            return nil
        }
    }

    private func dispatchNow(_ call: APICall, connection: ConnectionID, peer: String, grants: Grants, now: Int64) throws(ProtocolError) {
        let reply = Reply.http(connection)
        switch call {
        case .listTrips(let query):
            services.tripsAPI.listTrips(connection, query, now: now, visible: grants)
        case .createTrip(let body, let route, let rawBody):
            try services.tripsAPI.checkTripCapacity()
            let id = body.id ?? services.tripsAPI.makeTripID()
            if body.origin != nil { return try services.routes.createTripFromStops(id: id, body, rawBody: rawBody, reply: reply, client: RouteSearches.SearchClient(connection: connection, peer: peer)) }
            commands.submit(.create(id: id, body, route: route, rawBody: rawBody, found: nil), reply: reply, now: now)
        case .fleetClusters(let query):
            try services.fleet.clustersHTTP(connection, query, now: now)
        case .openAPI:
            break  // answered by the gate, before the token check
        case .getTrip(let id):
            try services.tripsAPI.getTrip(connection, id: id, grants: grants)
        case .trail(let id, let query, let format):
            try services.tripsAPI.trail(connection, id: id, query, format: format)
        case .endTrip(let id):
            commands.submit(.end(trip: id), reply: reply, now: now)
        case .putRoute(let id, let body, let route, let rawBody):
            commands.submit(.route(trip: id, body, route: route, rawBody: rawBody, reason: .client, found: nil), reply: reply, now: now)
        case .postFixes(let id, let fixes):
            services.metrics.fixesIn += fixes.count
            if fixes.isEmpty {
                try services.tripsAPI.answerNoFixes(connection, trip: id)  // nothing to store
            } else {
                commands.submit(.fixes(trip: id, fixes), reply: reply, now: now)
            }
        case .proceed(let id):
            commands.submit(.proceed(trip: id), reply: reply, now: now)
        case .listDevices:
            services.devices.listDevices(connection)
        case .getDevice(let id):
            try services.devices.getDevice(connection, id: id)
        case .putDevice(let id, let body):
            try services.devices.putDevice(connection, id: id, body, now: now)
        case .deleteDevice(let id):
            services.devices.deleteDevice(connection, id: id, now: now)
        case .createShare(let id, let body):
            try services.shares.createShare(connection, trip: id, body, now: now)
        case .revokeShare(let jti):
            try services.shares.revokeShare(connection, jti: jti, now: now)
        case .findRoute(let query):
            try services.routes.findRouteHTTP(connection, query, peer: peer)
        case .deviceFix(let device, let fix, let source):
            do {
                try services.devices.deviceFix(connection, device: device, fix, source: source, now: now)
            } catch {
                services.metrics.deviceRefusals[error.code.rawValue, default: 0] += 1
                throw error
            }
        }
    }

}

