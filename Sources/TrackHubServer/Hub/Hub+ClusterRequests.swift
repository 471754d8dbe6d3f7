import TrackHubCore
import TrackHubProtocol

/// Cluster mode: the HTTP commands. Each is checked here as far as the request alone allows
/// (so a malformed one is a 400 without a trip to Redis), then appended to the log and
/// answered when applied (Hub+ClusterApply).
extension Hub {
    func appendCreate(_ body: CreateTripRequest, rawBody: [UInt8], now: Int64, reply connection: ConnectionID) throws(ProtocolError) {
        // The same checks the log applier makes, so their 400s come without a round trip.
        _ = try makeTrip(id: "check", body, now: now)
        let id = body.id ?? makeTripID()
        if trips[id] != nil { throw .conflict("id: trip \(id) already exists") }
        let text = String(decoding: rawBody, as: UTF8.self)
        appendToLog(ClusterCommand(kind: .create, trip: id, body: text), reply: .http(connection), now: now)
    }

    /// A new trip from a create request; errors name the field (PROTOCOL 5).
    func makeTrip(id: String, _ body: CreateTripRequest, now: Int64) throws(ProtocolError) -> Trip {
        let route = try makeRoute(body.route)
        do throws(TripSetupError) {
            return try Trip(id: id, route: route, waypoints: body.waypoints, destination: body.destination, config: body.config, now: now)
        } catch {
            throw ProtocolError(.badRequest, "\(error.field): \(error.message)")
        }
    }

    func routeTripCommandToLog(_ route: APIRoute, _ request: HTTPRequest, now: Int64) throws(ProtocolError) {
        let reply = Reply.http(request.connection)
        switch route {
        case .endTrip(let id):
            appendToLog(ClusterCommand(kind: .end, trip: id), reply: reply, now: now)
        case .putRoute(let id):
            let body = try RerouteRequest.decode(request.body, limits: config.protocolLimits)
            guard try makeRoute(body.route) != nil else { throw .badRequest("route is required") }
            appendToLog(ClusterCommand(kind: .route, trip: id, body: String(decoding: request.body, as: UTF8.self)), reply: reply, now: now)
        case .postFixes(let id):
            let body = try FixBatchRequest.decode(request.body, limits: config.protocolLimits, now: now)
            metrics.fixesIn += body.fixes.count
            if body.fixes.isEmpty {
                respond(request.connection, status: 200, json: HTTPBodies.noAcks)
            } else {
                appendToLog(ClusterCommand(kind: .fixes, trip: id, fixes: body.fixes), reply: reply, now: now)
            }
        case .proceed(let id):
            appendToLog(ClusterCommand(kind: .proceed, trip: id), reply: reply, now: now)
        case .listTrips, .createTrip, .getTrip, .trail, .fleetClusters, .openAPI:
            throw .notFound("no route for \(request.method.rawValue) \(request.path)")
        }
    }

    /// PROTOCOL 5: an arrived trip ends `--end-after` after arriving. In a cluster any node
    /// may notice first; each asks the log once, and an end of an ended trip changes nothing.
    func requestEndsOfArrivedTrips(now: Int64) {
        guard let cluster else { return }
        for (id, entry) in trips where entry.trip.status == .arrived && !cluster.endsRequested.contains(id) {
            if let arrivedAt = entry.trip.arrivedAt, now - arrivedAt >= config.endAfterMs {
                cluster.endsRequested.insert(id)
                appendToLog(ClusterCommand(kind: .end, trip: id), reply: nil, now: now)
            }
        }
    }
}
