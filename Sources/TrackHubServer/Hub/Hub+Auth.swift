import Foundation
import TrackHubCore
import TrackHubProtocol

/// What each scope may do (PROTOCOL section 2). `trips` limits `viewer` and `courier`; it is
/// ignored for `admin` (everything) and `fleet` (the whole fleet, and the whole trip list).
extension Grants {
    init(claims: TokenClaims) {
        self.init(
            scopes: Set(claims.scopes.compactMap { Scope(rawValue: $0.rawValue) }),
            trips: claims.trips, expiresAt: claims.expiresAt, isAuthenticated: true)
    }

    private func lists(_ trip: String) -> Bool { trips == nil || trips?.contains(trip) == true }

    /// `subscribe`, `GET /v1/trips/{id}`, `GET .../trail`: viewer or courier, its trips.
    func allowsViewing(_ trip: String) -> Bool {
        scopes.contains(.admin) || ((scopes.contains(.viewer) || scopes.contains(.courier)) && lists(trip))
    }

    /// `fix`, `proceed`, `POST .../fixes`, `POST .../proceed`: courier, its trips.
    func allowsDriving(_ trip: String) -> Bool {
        scopes.contains(.admin) || (scopes.contains(.courier) && lists(trip))
    }

    /// `viewport`, `GET /v1/fleet/clusters`: fleet.
    var allowsFleet: Bool { scopes.contains(.admin) || scopes.contains(.fleet) }

    /// `POST /v1/trips`, `PUT .../route`, `DELETE /v1/trips/{id}`: admin.
    var allowsAdministering: Bool { scopes.contains(.admin) }

    /// Whether `GET /v1/trips` shows this trip: its trips, or every trip for admin and fleet.
    func allowsListing(_ trip: String) -> Bool {
        scopes.contains(.admin) || scopes.contains(.fleet) || lists(trip)
    }

    /// True once the token's `exp` (with the leeway) has passed; never in open mode.
    func isExpired(nowMs: Int64) -> Bool {
        guard let expiresAt else { return false }
        return JWT.isExpired(expiresAt: expiresAt, nowMs: nowMs)
    }
}

/// Token enforcement: the upgrade, every op, every `/v1` route, and the token's life on a
/// live connection. Open mode (no secret) grants everything and ignores tokens.
extension Hub {
    var isSecured: Bool { !config.jwtSecrets.isEmpty }

    /// Verifies a token against each secret in turn (two during a rotation, PROTOCOL 14);
    /// the error is `unauthorized` and names the token: a secret whose signature matched
    /// explains better (say, `expired`) than one that merely did not match.
    func verifyToken(_ token: String, now: Int64) -> Result<Grants, ProtocolError> {
        guard isSecured else { return .success(.everything) }
        var verdict: TokenError?
        for secret in config.jwtSecrets {
            switch JWT.verify(token, secret: secret, nowMs: now) {
            case .success(let claims):
                return .success(Grants(claims: claims))
            case .failure(let error):
                if verdict == nil || verdict == .badSignature { verdict = error }
            }
        }
        let refusal = ProtocolError.unauthorized(verdict?.message ?? "token is not valid")
        logTokenRefused(refusal)
        return .failure(refusal)
    }

    // MARK: - WebSocket

    /// The upgrade: a `?token=` that does not verify refuses it with 401. Nil: carry on.
    func authorizeUpgrade(_ request: UpgradeRequest) -> UpgradeDecision? {
        guard isSecured, let token = request.queryValue("token") else { return nil }
        if case .failure = verifyToken(token, now: wallClockMillis()) { return .refuse(status: 401) }
        return nil
    }

    /// What a new connection may do: everything when open, the URL token's grants, or
    /// nothing until `hello` brings a token.
    func initialGrants(for request: UpgradeRequest, now: Int64) -> Grants {
        guard isSecured else { return .everything }
        guard let token = request.queryValue("token"), case .success(let grants) = verifyToken(token, now: now) else {
            return .nothing
        }
        return grants
    }

    /// Checks one decoded message against the connection's token, before it is handled.
    /// A `hello` with a valid token replaces the connection's token here. Returns the error
    /// to answer with (nil: handle the message).
    func authorize(_ message: ClientMessage, from id: ConnectionID, now: Int64) -> ProtocolError? {
        guard isSecured, let session = sessions[id] else { return nil }
        let grants = session.grants
        switch message {
        case .ping:
            return nil
        case .hello(let token):
            guard let token else { return nil }
            switch verifyToken(token, now: now) {
            case .failure(let error): return error  // a refused token changes nothing
            case .success(let newGrants):
                replaceGrants(of: id, with: newGrants)
                return nil
            }
        default:
            break
        }
        guard grants.isAuthenticated else {
            return .unauthorized("\(message.op): no valid token; present one as ?token= on the upgrade or in hello")
        }
        if grants.isExpired(nowMs: now) {
            closeSession(id, code: .policyViolation, reason: "token expired")
            return .unauthorized("\(message.op): token expired")
        }
        switch message {
        case .hello, .ping, .unsubscribe:
            return nil
        case .subscribe(let trip, _, _):
            if grants.allowsViewing(trip) { return nil }
            // too_large comes before forbidden (PROTOCOL 4): let subscribe report the limit.
            if session.subscriptions[trip] == nil && session.subscriptions.count >= config.maxSubscriptions { return nil }
            return .forbidden("subscribe: token does not allow trip \(trip) (needs scope viewer or courier with the trip in trips)")
        case .fix(let trip, _), .proceed(let trip):
            if grants.allowsDriving(trip) { return nil }
            return .forbidden("\(message.op): token does not allow trip \(trip) (needs scope courier with the trip in trips)")
        case .viewport:
            if grants.allowsFleet { return nil }
            return .forbidden("viewport: token has no fleet scope")
        }
    }

    /// A frame that did not decode, from a connection without a valid token: `unauthorized`
    /// comes before `bad_request` unless it was a `hello` or `ping` (which need no token).
    func authorizeUndecoded(_ bytes: [UInt8], from id: ConnectionID) -> ProtocolError? {
        guard isSecured, let session = sessions[id], !session.grants.isAuthenticated else { return nil }
        if let value = try? JSONParser(maxDepth: config.protocolLimits.maxNestingDepth).parse(bytes),
           case .object(let object) = value, case .string(let op)? = object["op"], op == "hello" || op == "ping" {
            return nil
        }
        return .unauthorized("no valid token; present one as ?token= on the upgrade or in hello")
    }

    /// A `hello` brought a valid token: it replaces the connection's. Subscriptions and the
    /// viewport the new token does not cover end (`unsubscribed` with reason `forbidden`).
    func replaceGrants(of id: ConnectionID, with grants: Grants) {
        guard let session = sessions[id] else { return }
        sessions[id]?.grants = grants
        for trip in session.subscriptions.keys.sorted() where !grants.allowsViewing(trip) {
            removeSubscriber(id, from: trip)
            enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: trip, reason: "forbidden"), to: id)
        }
        if session.viewportKey != nil && !grants.allowsFleet {
            setViewport(id, viewport: nil, re: nil)
        }
    }

    /// Housekeeping: closes with 1008 connections whose token expired, and connections that
    /// presented no valid token within `--auth-timeout` (0: no timeout).
    func sweepTokens(now: Int64) {
        guard isSecured else { return }
        for (id, session) in sessions where !session.isClosing {
            if session.grants.isAuthenticated {
                if session.grants.isExpired(nowMs: now) {
                    closeSession(id, code: .policyViolation, reason: "token expired")
                }
            } else if config.authTimeoutMs > 0 && now - session.openedAt >= config.authTimeoutMs {
                closeSession(id, code: .policyViolation, reason: "no valid token within the auth timeout")
            }
        }
    }

    // MARK: - HTTP

    /// Every `/v1` request on a secured hub needs `Authorization: Bearer <token>` (401),
    /// except those of routes open to anyone (`APIRoute.Access.anyone`) and preflights.
    /// Returns the grants (everything on an open hub).
    func authenticateHTTPIfSecured(_ request: HTTPRequest, now: Int64) throws(ProtocolError) -> Grants {
        guard isSecured else { return .everything }
        return try authenticateHTTP(request, now: now)
    }

    /// The scope and trip a route needs (403, PROTOCOL 2). A request that is also malformed
    /// gets its `bad_request` or `too_large` instead of `forbidden` (PROTOCOL 4); 404 and 409
    /// come after, from the route itself.
    func authorizeHTTP(_ route: APIRoute, _ request: HTTPRequest, query: QueryString, grants: Grants, now: Int64) throws(ProtocolError) {
        guard isSecured else { return }
        let allowed: Bool
        switch route.kind.access {
        case .anyone, .anyToken: allowed = true
        case .viewTrip: allowed = grants.allowsViewing(route.tripID ?? "")
        case .driveTrip: allowed = grants.allowsDriving(route.tripID ?? "")
        case .fleet: allowed = grants.allowsFleet
        case .admin: allowed = grants.allowsAdministering
        }
        if allowed { return }
        // The checks the request alone allows, so that their errors come first.
        switch route {
        case .createTrip:
            let body = try CreateTripRequest.decode(request.body, limits: config.protocolLimits)
            _ = try makeRoute(body.route)
            throw .forbidden("POST /v1/trips: token has no admin scope")
        case .fleetClusters:
            _ = try ClustersQuery.parse(query)
            throw .forbidden("GET /v1/fleet/clusters: token has no fleet scope")
        case .trail:
            _ = try TrailQuery.parse(query)
            _ = try TrailFormat.parse(query)
        case .putRoute:
            let body = try RerouteRequest.decode(request.body, limits: config.protocolLimits)
            _ = try makeRoute(body.route)
        case .postFixes:
            _ = try FixBatchRequest.decode(request.body, limits: config.protocolLimits, now: now)
        case .listTrips, .getTrip, .endTrip, .proceed, .openAPI:
            break
        }
        throw .forbidden("\(request.method.rawValue) \(request.path): token does not allow trip \(route.tripID ?? "") (scope or trips)")
    }

    /// The token of an HTTP request: `Authorization: Bearer <token>`.
    func authenticateHTTP(_ request: HTTPRequest, now: Int64) throws(ProtocolError) -> Grants {
        guard let header = request.authorization?.trimmingCharacters(in: [" ", "\t"]), !header.isEmpty else {
            throw .unauthorized("Authorization: a Bearer token is required")
        }
        let scheme = header.prefix { $0 != " " }
        guard scheme.lowercased() == "bearer" else {
            throw .unauthorized("Authorization: scheme must be Bearer")
        }
        let token = header.dropFirst(scheme.count).trimmingCharacters(in: [" ", "\t"])
        switch verifyToken(token, now: now) {
        case .success(let grants): return grants
        case .failure(let error): throw error
        }
    }

    /// PROTOCOL 1: on a secured hub a `/v1` request's token is checked from its headers, and
    /// one without a valid token is answered 401 before its body is read (so an
    /// unauthenticated client cannot make the hub read, hold or parse a body; 401 also beats 413).
    func httpRefusalBeforeBody(_ request: HTTPRequest) -> ProtocolError? {
        guard isSecured, request.path.hasPrefix("/v1/") else { return nil }
        switch APIRoute.match(method: request.method, path: request.path) {
        case .preflight, .route(.openAPI): return nil  // no token needed (PROTOCOL 2)
        default: break
        }
        do {
            _ = try authenticateHTTP(request, now: wallClockMillis())
            return nil
        } catch {
            return error
        }
    }
}
