import TrackHubLWS
import TrackHubProtocol

/// What a `/v1` request gets before any trip is looked at: the one place PROTOCOL 4's
/// order of HTTP errors is decided, pure (no hub state), so that order is one table test.
///
/// The order: a preflight and the API description need no token; then 401 (no valid token
/// on a secured hub); then the path (404), the method (405 with `Allow`) and the trip id
/// (400); then the request's own query and body (400, 413); then the token's scope (403).
/// What only the trip can tell (404 for a trip that does not exist, 409) comes after, from
/// the route itself.
struct APIGate: Sendable {
    /// The outcome for one request.
    enum Decision: Sendable {
        /// `OPTIONS` on a known path: the methods it takes.
        case preflight(allowed: [HTTPMethod])
        /// `GET /v1/openapi.json`.
        case openAPI
        /// A known path with a method it does not take: 405 with this `Allow`.
        case methodNotAllowed(ProtocolError, allow: String)
        case refused(ProtocolError)
        /// Parsed and allowed: carry it out with these grants.
        case call(APICall, Grants)
    }

    /// Whether tokens are checked (a hub with a secret).
    var isSecured: Bool
    var limits: APICall.Limits
    /// The grants of the request's `Authorization` header, or its 401.
    var authenticate: @Sendable (HTTPRequest, Int64) throws(ProtocolError) -> Grants

    func decide(_ request: HTTPRequest, now: Int64) -> Decision {
        let match = APIRoute.match(method: request.method, path: request.path)
        switch match {
        case .preflight(let allowed): return .preflight(allowed: allowed)
        case .route(.openAPI): return .openAPI
        case .notFound where request.method == .options: return .refused(.notFound("no route for OPTIONS \(request.path)"))
        default: break
        }
        do throws(ProtocolError) {
            // A device endpoint needs no token: the device id is the credential (PROTOCOL 2, 11).
            let isDeviceEndpoint: Bool
            if case .route(let matched) = match, matched.kind.access == .device { isDeviceEndpoint = true } else { isDeviceEndpoint = false }
            let grants = isSecured && !isDeviceEndpoint ? try authenticate(request, now) : .everything
            let route: APIRoute
            switch match {
            case .route(let matched):
                route = matched
            case .methodNotAllowed(let allowed):
                let allow = APIRoute.allowHeader(allowed)
                return .methodNotAllowed(.notFound("method \(request.method.rawValue) is not allowed on \(request.path); Allow: \(allow)"), allow: allow)
            case .badTripID(let id) where request.path.hasPrefix("/v1/devices/") || request.path.hasPrefix("/v1/owntracks/"):
                throw .badRequest("device: device id \(id) is not a valid id")
            case .badTripID(let id) where request.path.hasPrefix("/v1/shares/"):
                throw .badRequest("jti: \(id) is not a valid share link id")
            case .badTripID(let id):
                throw .badRequest("id: trip id \(id) is not a valid id")
            case .notFound, .preflight:
                throw .notFound("no route for \(request.method.rawValue) \(request.path)")
            }
            let call = try APICall.parse(route, request, limits: limits, now: now)
            guard grants.permits(route.kind.access, trip: route.tripID) else { throw Self.forbidden(route, request) }
            return .call(call, grants)
        } catch {
            return .refused(error)
        }
    }

    /// True when a request must present a credential (a token, or a device id at a phone
    /// endpoint): what `--max-refusal-rate` blocks. Preflights, the API description, pages
    /// and health do not.
    func needsCredential(_ request: HTTPRequest) -> Bool {
        if request.isSecondListener { return true }
        guard request.path.hasPrefix("/v1/") else { return false }
        switch APIRoute.match(method: request.method, path: request.path) {
        case .preflight, .route(.openAPI): return false
        case .route(let route) where route.kind.access == .device: return true
        default: return isSecured
        }
    }

    /// The 403 of a route, naming what the token lacks.
    private static func forbidden(_ route: APIRoute, _ request: HTTPRequest) -> ProtocolError {
        switch route {
        case .createTrip: return .forbidden("POST /v1/trips: token has no admin scope")
        case .fleetClusters: return .forbidden("GET /v1/fleet/clusters: token has no fleet scope")
        default: return .forbidden("\(request.method.rawValue) \(request.path): token does not allow trip \(route.tripID ?? "") (scope or trips)")
        }
    }
}
