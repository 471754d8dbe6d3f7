import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Who may do what (PROTOCOL 1, 2, 4 and 13): the hub's credentials and the rules around
/// them, enforced on the upgrade, every op, every `/v1` route, and for the token's life on
/// a live connection. Open mode (no secret) grants everything and ignores tokens.
///
/// It owns the token checks (`tokens`, with the share links they consult), what a `/v1`
/// request gets before it runs (`apiGate`), the Origins and Host names answered
/// (`originPolicy`), the refusals per address (`refusals`) and the token rules of a
/// WebSocket session (`sessionPolicy`). Where a rule changes a live connection (a new token
/// in `hello`, an expired one) it acts on the open sessions through `fanout`. Owned by the
/// service thread, like every service of the hub.
final class AccessControl {
    /// Token checks, shared by the WebSocket side and the HTTP gate; it holds the share links.
    let tokens: TokenVerifier
    /// What a `/v1` request gets before it runs (PROTOCOL 4's order of errors).
    let apiGate: APIGate
    /// Which Origins and Host names are answered (PROTOCOL 1).
    let originPolicy: OriginPolicy
    /// The write policy and lifetime rules of WebSocket sessions (decisions; the fan-out acts
    /// on the write rules, this on the token ones).
    let sessionPolicy: SessionPolicy
    /// `--max-refusal-rate`: refusals for bad credentials per address (PROTOCOL 1).
    var refusals: RefusalLimiter

    /// The limits a message is judged against (`--max-subscriptions`, the nesting depth).
    private let config: HubConfig
    /// Now, for the tokens' expiry and the refusal buckets.
    private let clock: HubClock
    /// The open sessions, whose grants these rules read and replace.
    private let fanout: Fanout
    /// The trips, for the slot of a subscription a new token ends.
    private let trips: TripTable
    /// The fleet channel, whose viewport a token without fleet scope ends.
    private let fleet: FleetService

    /// The rules `config` sets, acting on `fanout`'s sessions.
    init(config: HubConfig, clock: HubClock, fanout: Fanout, trips: TripTable, fleet: FleetService) {
        self.config = config
        self.clock = clock
        self.fanout = fanout
        self.trips = trips
        self.fleet = fleet
        self.originPolicy = OriginPolicy(config: config)
        self.refusals = RefusalLimiter(ratePerSecond: config.maxRefusalRate)
        let tokens = TokenVerifier(secrets: config.jwtSecrets)
        self.tokens = tokens
        self.sessionPolicy = Self.sessionPolicy(for: config)
        self.apiGate = APIGate(
            isSecured: tokens.isSecured,
            limits: APICall.Limits(protocolLimits: config.protocolLimits, maxRoutePoints: config.maxRoutePoints),
            authenticate: { request, now throws(ProtocolError) in try tokens.authenticate(request, now: now) })
    }

    /// The session rules of `config`. The hub's `Fanout` is made with the same value before
    /// this exists (it enforces the write rules; `sweepTokens` here, the token ones).
    static func sessionPolicy(for config: HubConfig) -> SessionPolicy {
        SessionPolicy(
            maxUnsentBytes: config.maxUnsentBytes, maxUnsentDurationMs: config.maxUnsentDurationMs,
            pingIntervalMs: config.pingIntervalMs, authTimeoutMs: config.authTimeoutMs,
            isSecured: !config.jwtSecrets.isEmpty)  // as `TokenVerifier.isSecured`: a hub with a secret
    }

    /// Whether tokens are checked at all (a hub with a secret).
    var isSecured: Bool { tokens.isSecured }

    /// Verifies a token against each secret in turn (see `TokenVerifier`).
    func verifyToken(_ token: String, now: Int64) -> Result<Grants, ProtocolError> {
        tokens.verify(token, now: now)
    }

    // MARK: - WebSocket

    /// The upgrade: a `?token=` that does not verify refuses it with 401. Nil: carry on.
    func authorizeUpgrade(_ request: UpgradeRequest) -> UpgradeDecision? {
        guard isSecured, let token = request.queryValue("token") else { return nil }
        if case .failure(let error) = verifyToken(token, now: clock.wallMillis()) { return .refuse(error) }
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
        guard isSecured, let session = fanout[id] else { return nil }
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
        if grants.isRevoked {
            return .unauthorized("\(message.op): the connection's token was revoked (share link); present another in hello")
        }
        guard grants.isAuthenticated else {
            return .unauthorized("\(message.op): no valid token; present one as ?token= on the upgrade or in hello")
        }
        if grants.isExpired(nowMs: now) {
            fanout.close(id, code: .policyViolation, reason: "token expired")
            return .unauthorized("\(message.op): token expired")
        }
        let (access, trip) = message.access
        if grants.permits(access, trip: trip) { return nil }
        switch message {
        case .subscribe(let trip, _, _, _):
            // too_large comes before forbidden (PROTOCOL 4): let subscribe report the limit.
            if session.subscriptions[trip] == nil && session.subscriptions.count >= config.maxSubscriptions { return nil }
            return .forbidden("subscribe: token does not allow trip \(trip) (needs scope viewer or courier with the trip in trips, or share for its one trip)")
        case .viewport:
            return .forbidden("viewport: token has no fleet scope")
        default:
            return .forbidden("\(message.op): token does not allow trip \(trip ?? "") (needs scope courier with the trip in trips)")
        }
    }

    /// A frame that did not decode, from a connection without a valid token: `unauthorized`
    /// comes before `bad_request` unless it was a `hello` or `ping` (which need no token).
    func authorizeUndecoded(_ bytes: [UInt8], from id: ConnectionID) -> ProtocolError? {
        guard isSecured, let session = fanout[id], !session.grants.isAuthenticated else { return nil }
        if let value = try? JSONParser(maxDepth: config.protocolLimits.maxNestingDepth).parse(bytes),
           case .object(let object) = value, case .string(let op)? = object["op"], op == "hello" || op == "ping" {
            return nil
        }
        return .unauthorized("no valid token; present one as ?token= on the upgrade or in hello")
    }

    /// A `hello` brought a valid token: it replaces the connection's. Subscriptions and the
    /// viewport the new token does not cover end (`unsubscribed` with reason `forbidden`).
    func replaceGrants(of id: ConnectionID, with grants: Grants) {
        guard let session = fanout[id] else { return }
        fanout[id]?.grants = grants
        for trip in session.subscriptions.keys.sorted() where !grants.permits(.followTrip, trip: trip) {
            fanout.unsubscribe(id, from: trip, slot: trips[trip]?.slot)
            fanout.enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: trip, reason: "forbidden"), to: id)
        }
        if session.viewportKey != nil && !grants.allowsFleet {
            fleet.setViewport(id, viewport: nil, re: nil)
        }
    }

    /// Housekeeping: closes with 1008 connections whose token expired, and connections that
    /// presented no valid token within `--auth-timeout` (0: no timeout).
    func sweepTokens(now: Int64) {
        for (id, session) in fanout.sessions {
            fanout.carryOut(sessionPolicy.tokenLifetime(session, now: now), for: id)
        }
    }

    // MARK: - HTTP

    /// Identity before work (PROTOCOL 1, 11): a `/v1` request is refused from its headers,
    /// before its body is read, when its address is past `--max-refusal-rate` (429), when it
    /// is for a phone endpoint and announces a body over 64 KiB (413) or names a device that
    /// is not registered (404), and on a secured hub when it has no valid token (401; 401
    /// also beats 413). So an unauthenticated client cannot make the hub read, hold or parse
    /// a body. `isSurelyUnknownDevice`: the device registry's answer for an id (the devices
    /// are not this type's).
    func httpRefusalBeforeBody(
        _ request: HTTPRequest, declaredLength: Int, isSurelyUnknownDevice: (String) -> Bool
    ) -> ProtocolError? {
        let path = DeviceDoor.routedPath(request)
        guard path.hasPrefix("/v1/") else { return nil }
        let now = clock.wallMillis()
        switch APIRoute.match(method: request.method, path: path) {
        case .preflight, .route(.openAPI):
            return nil  // no token needed (PROTOCOL 2)
        case .route(let route) where route.kind.access == .device:
            // The device id is the credential: checked here instead of a token.
            if let refusal = refusals.refusal(for: request.peerAddress, now: now) { return refusal }
            if declaredLength > DeviceDoor.maxBodyBytes {
                return .tooLarge("body: a phone's request is at most \(DeviceDoor.maxBodyBytes) bytes")
            }
            if let id = DeviceDoor.deviceBeforeBody(request, route: route), isSurelyUnknownDevice(id) {
                return .notFound("device \(id) is not registered")
            }
            return nil
        default:
            guard isSecured else { return nil }
            if let refusal = refusals.refusal(for: request.peerAddress, now: now) { return refusal }
            do {
                _ = try tokens.authenticate(request, now: now)
                return nil
            } catch {
                return error
            }
        }
    }

    /// Headers on every answer (the host's refusals included): CORS for an allowed origin.
    func responseHeaders(for request: HTTPRequest) -> [(name: String, value: String)] {
        CORS.responseHeaders(origin: request.origin, host: request.host, policy: originPolicy)
    }
}
