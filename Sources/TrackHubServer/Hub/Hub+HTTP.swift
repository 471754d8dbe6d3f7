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
        var w = JSONWriter(headroom: 0, capacity: 128)
        w.beginObject()
        w.field("status", status)
        w.field("trips", trips.count)
        w.field("connections", sessions.count)
        w.field("server", serverName)
        w.endObject()
        respond(request.connection, status: status == "ok" ? 200 : 503, json: w.finish())
    }

    /// `/v1/...` routes. Throws the error to answer with.
    private func routeAPI(_ request: HTTPRequest, now: Int64) throws(ProtocolError) {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)
        guard var query = try? QueryString.parse("") else { throw .badRequest("query string") }
        query.items = request.query
        let connection = request.connection
        let grants = try authorizeHTTP(request, now: now)  // PROTOCOL 2: 401 / 403
        switch (request.method, parts.count, parts.first) {
        case (.get, 1, "trips"):
            listTrips(connection, try TripListQuery.parse(query), now: now, visible: grants)
        case (.post, 1, "trips"):
            let body = try CreateTripRequest.decode(request.body, limits: config.protocolLimits)
            try checkTripCapacity()
            if cluster != nil {
                return try appendCreate(body, rawBody: request.body, now: now, reply: connection)
            }
            createTrip(NewTrip(
                id: body.id, route: try makeRoute(body.route), waypoints: body.waypoints, destination: body.destination,
                config: body.config, riderJSON: body.rider.map { riderBytes($0) }), now: now, reply: connection)
        case (.get, 2, "fleet") where parts[1] == "clusters":
            try fleetClustersHTTP(connection, try ClustersQuery.parse(query), now: now)
        case (_, _, "trips") where parts.count >= 2:
            let id = parts[1]
            guard TripID.isValid(id) else { throw .badRequest("trip id \(id) is not a valid id") }
            try routeTrip(request, id: id, rest: Array(parts.dropFirst(2)), query: query, now: now)
        default:
            throw .notFound("no route for \(request.method.rawValue) \(request.path)")
        }
    }

    private func routeTrip(_ request: HTTPRequest, id: String, rest: [String], query: QueryString, now: Int64) throws(ProtocolError) {
        let connection = request.connection
        if cluster != nil, request.method != .get {
            // Cluster mode: whether the trip exists is decided in log order (Hub+ClusterApply).
            return try routeTripCommandToLog(request, id: id, rest: rest, now: now)
        }
        guard trips[id] != nil else { throw .notFound("trip \(id) does not exist") }
        switch (request.method, rest.first) {
        case (.get, nil):
            respondTrip(connection, id: id, status: 200)
        case (.delete, nil):
            endTrip(id, now: now, reply: connection)
        case (.put, "route") where rest.count == 1:
            let body = try RerouteRequest.decode(request.body, limits: config.protocolLimits)
            guard let route = try makeRoute(body.route) else { throw .badRequest("route is required") }
            reroute(trip: id, route: route, waypoints: body.waypoints, destination: body.destination, now: now, reply: connection)
        case (.post, "fixes") where rest.count == 1:
            let body = try FixBatchRequest.decode(request.body, limits: config.protocolLimits, now: now)
            metrics.fixesIn += body.fixes.count
            if body.fixes.isEmpty {
                respond(connection, status: 200, json: Array(#"{"acks":[]}"#.utf8))
            } else {
                submitFixes(trip: id, fixes: body.fixes, now: now, reply: .http(connection))
            }
        case (.post, "proceed") where rest.count == 1:
            proceed(trip: id, now: now, reply: .http(connection))
        case (.get, "trail") where rest.count == 1:
            let trail = try TrailQuery.parse(query)
            if cluster != nil {
                // Cluster mode acks a fix once Redis has it, before this node's own copy of the
                // trail is written: read it after every write queued so far (an empty batch
                // completes after them), so an acked fix is always in the trail.
                persist([]) { [self] _ in respondTrail(connection, id: id, trail) }
            } else {
                respondTrail(connection, id: id, trail)
            }
        default:
            throw .notFound("no route for \(request.method.rawValue) \(request.path)")
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
        var w = JSONWriter(headroom: 0, capacity: 64)
        w.value(rider)
        return w.finish()
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
        var w = JSONWriter(headroom: 0, capacity: 256 + page.count * 400)
        w.beginObject()
        w.key("trips")
        w.beginArray()
        for id in page {
            w.beginObject()
            ServerMessages.writeTripFields(&w, .init(id: id, entry: trips[id], trail: [], now: now, includeRoute: false, includeTrail: false))
            w.endObject()
        }
        w.endArray()
        w.field("next", ids.count > page.count ? page.last : nil)
        w.endObject()
        respond(connection, status: 200, json: w.finish())
    }

    func respondTrip(_ connection: ConnectionID, id: String, status: Int) {
        let trail = (try? store.recentFixes(tripID: id, count: 100)) ?? []
        respond(connection, status: status, json: ServerMessages.tripBody(.init(id: id, entry: trips[id], trail: trail, now: wallClockMillis())))
    }

    /// The trail (PROTOCOL 5), streamed page by page when it is longer than one page
    /// (`TrailStream`); a trail that fits in one page goes out whole, with its length.
    private func respondTrail(_ connection: ConnectionID, id: String, _ query: TrailQuery) {
        let stream: TrailStream
        let first: [UInt8]
        do {
            stream = try TrailStream(store: store, tripID: id, query: query)
            first = stream.fitsInOnePage ? try stream.wholeBody() : try stream.nextChunk() ?? []
        } catch {
            respondError(connection, ProtocolError(.unavailable, "trail: \(error)"))
            return
        }
        var response = HTTPResponse(status: 200, headers: [("cache-control", "no-store")], body: first)
        if !stream.fitsInOnePage { response.next = { try stream.nextChunk() } }
        respond(connection, response)
    }

    // MARK: - Responses

    func respond(_ connection: ConnectionID, status: Int, json: [UInt8]) {
        respond(connection, HTTPResponse(status: status, headers: [("cache-control", "no-store")], body: json))
    }

    func respond(_ connection: ConnectionID, _ response: HTTPResponse) {
        host.respond(connection, response)
    }

    func respondError(_ connection: ConnectionID, _ error: ProtocolError) {
        metrics.errorsOut[error.code.rawValue, default: 0] += 1
        respond(connection, status: error.code.httpStatus, json: ServerReplies.httpError(error))
    }
}

