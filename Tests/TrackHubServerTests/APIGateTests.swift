import Testing
import TrackHubLWS
import TrackHubProtocol
@testable import TrackHubServer

/// PROTOCOL 4's order of HTTP errors, decided by `APIGate` alone (no hub, no socket):
/// preflight and the API description need no token; then 401; then 404, 405 and a bad trip
/// id; then the request's own 400 and 413; then 403.
@Suite struct APIGateTests {
    /// Tokens of the table: the header value names the grants it stands for.
    static let tokens: [String: Grants] = [
        "Bearer admin": Grants(scopes: [.admin], trips: nil, expiresAt: nil, isAuthenticated: true),
        "Bearer viewer-T1": Grants(scopes: [.viewer], trips: ["T1"], expiresAt: nil, isAuthenticated: true),
        "Bearer courier-T1": Grants(scopes: [.courier], trips: ["T1"], expiresAt: nil, isAuthenticated: true),
        "Bearer fleet": Grants(scopes: [.fleet], trips: [], expiresAt: nil, isAuthenticated: true),
    ]

    static func gate(secured: Bool = true) -> APIGate {
        APIGate(
            isSecured: secured,
            limits: APICall.Limits(protocolLimits: .default, maxRoutePoints: 3),
            authenticate: { request, _ throws(ProtocolError) in
                guard let header = request.authorization else { throw .unauthorized("Authorization: a Bearer token is required") }
                guard let grants = tokens[header] else { throw .unauthorized("token is not valid") }
                return grants
            })
    }

    static func request(_ method: HTTPMethod, _ path: String, token: String? = nil, body: String = "", query: [(String, String)] = []) -> HTTPRequest {
        HTTPRequest(
            connection: ConnectionID(raw: 1), method: method, path: path, query: query.map { (name: $0.0, value: $0.1) },
            origin: nil, host: "127.0.0.1", authorization: token, peerAddress: "127.0.0.1", body: Array(body.utf8))
    }

    /// What the client sees: a status (and for 200, the route that would run).
    static func outcome(_ decision: APIGate.Decision) -> String {
        switch decision {
        case .preflight: return "preflight"
        case .openAPI: return "openapi"
        case .methodNotAllowed(_, let allow): return "405 \(allow)"
        case .refused(let error): return "\(error.httpStatus) \(error.code.rawValue)"
        case .call(let call, _): return "call \(call.route.kind.rawValue)"
        }
    }

    static let route = #"{"route":[[24.94,60.17],[24.95,60.18]]}"#
    static let tooLongRoute = #"{"route":[[24.94,60.17],[24.95,60.18],[24.96,60.19],[24.97,60.2]]}"#

    struct Row: CustomTestStringConvertible, Sendable {
        var method: HTTPMethod
        var path: String
        var token: String?
        var body = ""
        var query: [(String, String)] = []
        var expected: String
        var testDescription: String { "\(method.rawValue) \(path) [\(token ?? "no token")] \(body.prefix(20)) -> \(expected)" }
    }

    static let rows: [Row] = [
        // No token needed.
        Row(method: .options, path: "/v1/trips", expected: "preflight"),
        Row(method: .get, path: "/v1/openapi.json", expected: "openapi"),
        Row(method: .options, path: "/v1/nothing", expected: "404 not_found"),
        // 401 before everything else: an unknown path, a wrong method, a bad id, a bad body.
        Row(method: .get, path: "/v1/nothing", expected: "401 unauthorized"),
        Row(method: .patch, path: "/v1/trips", expected: "401 unauthorized"),
        Row(method: .get, path: "/v1/trips/bad%20id", token: "Bearer nonsense", expected: "401 unauthorized"),
        Row(method: .post, path: "/v1/trips", body: "{", expected: "401 unauthorized"),
        // Then the path, the method and the trip id.
        Row(method: .get, path: "/v1/nothing", token: "Bearer viewer-T1", expected: "404 not_found"),
        Row(method: .patch, path: "/v1/trips", token: "Bearer viewer-T1", expected: "405 GET, POST, OPTIONS"),
        Row(method: .get, path: "/v1/trips/" + String(repeating: "x", count: 200), token: "Bearer viewer-T1", expected: "400 bad_request"),
        // Then the request's own 400 and 413, also for a token that may not call the route.
        Row(method: .post, path: "/v1/trips", token: "Bearer viewer-T1", body: "{", expected: "400 bad_request"),
        Row(method: .post, path: "/v1/trips", token: "Bearer viewer-T1", body: tooLongRoute, expected: "413 too_large"),
        Row(method: .put, path: "/v1/trips/T2/route", token: "Bearer courier-T1", body: "{}", expected: "400 bad_request"),
        Row(method: .get, path: "/v1/trips/T2/trail", token: "Bearer viewer-T1", query: [("from", "yesterday")], expected: "400 bad_request"),
        Row(method: .get, path: "/v1/fleet/clusters", token: "Bearer viewer-T1", query: [("bbox", "x")], expected: "400 bad_request"),
        // Then the scope.
        Row(method: .post, path: "/v1/trips", token: "Bearer viewer-T1", body: route, expected: "403 forbidden"),
        Row(method: .get, path: "/v1/trips/T2", token: "Bearer viewer-T1", expected: "403 forbidden"),
        Row(method: .post, path: "/v1/trips/T1/fixes", token: "Bearer viewer-T1", body: #"{"fixes":[]}"#, expected: "403 forbidden"),
        Row(method: .get, path: "/v1/fleet/clusters", token: "Bearer courier-T1", query: [("bbox", "24,60,25,61"), ("zoom", "10")], expected: "403 forbidden"),
        Row(method: .delete, path: "/v1/trips/T1", token: "Bearer courier-T1", expected: "403 forbidden"),
        // Allowed.
        Row(method: .get, path: "/v1/trips", token: "Bearer courier-T1", expected: "call listTrips"),
        Row(method: .get, path: "/v1/trips/T1", token: "Bearer viewer-T1", expected: "call getTrip"),
        Row(method: .post, path: "/v1/trips/T1/fixes", token: "Bearer courier-T1", body: #"{"fixes":[]}"#, expected: "call postFixes"),
        Row(method: .get, path: "/v1/fleet/clusters", token: "Bearer fleet", query: [("bbox", "24,60,25,61"), ("zoom", "10")], expected: "call fleetClusters"),
        Row(method: .post, path: "/v1/trips", token: "Bearer admin", body: route, expected: "call createTrip"),
    ]

    @Test(arguments: rows) func theOrderOfErrors(_ row: Row) {
        let decision = Self.gate().decide(Self.request(row.method, row.path, token: row.token, body: row.body, query: row.query), now: 0)
        #expect(Self.outcome(decision) == row.expected)
    }

    @Test func anOpenHubIgnoresTokensButNotBadRequests() {
        let gate = Self.gate(secured: false)
        #expect(Self.outcome(gate.decide(Self.request(.post, "/v1/trips", token: "Bearer nonsense", body: Self.route), now: 0)) == "call createTrip")
        #expect(Self.outcome(gate.decide(Self.request(.post, "/v1/trips", body: "{"), now: 0)) == "400 bad_request")
        #expect(Self.outcome(gate.decide(Self.request(.patch, "/v1/trips"), now: 0)) == "405 GET, POST, OPTIONS")
    }

    @Test func theCallCarriesWhatWasParsedOnce() throws {
        let decision = Self.gate().decide(Self.request(.post, "/v1/trips", token: "Bearer admin", body: #"{"id":"T7","route":[[24.94,60.17],[24.95,60.18]]}"#), now: 0)
        guard case .call(.createTrip(let body, let route, let raw), let grants) = decision else {
            Issue.record("expected a createTrip call, got \(Self.outcome(decision))")
            return
        }
        #expect(body.id == "T7")
        #expect(route?.points.count == 2)
        #expect(raw.count > 0)
        #expect(grants.allowsAdministering)
    }
}
