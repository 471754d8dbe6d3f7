import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Who presents what, for the authorization matrix.
enum Presenter: CustomStringConvertible, CaseIterable, Equatable, Sendable {
    case noToken, badSignature, expired
    case courier(right: Bool), viewer(right: Bool), fleet(right: Bool), admin(right: Bool)
    /// A share link's token (PROTOCOL 13): its one trip, as a customer sees it.
    case share(right: Bool)

    static var allCases: [Presenter] {
        [.noToken, .badSignature, .expired]
            + [true, false].flatMap { right in
                [Presenter.courier(right: right), .viewer(right: right), .fleet(right: right), .admin(right: right), .share(right: right)]
            }
    }

    var description: String {
        switch self {
        case .noToken: return "no token"
        case .badSignature: return "bad signature"
        case .expired: return "expired"
        case .courier(let right): return "courier (\(right ? "right" : "wrong") trip)"
        case .viewer(let right): return "viewer (\(right ? "right" : "wrong") trip)"
        case .fleet(let right): return "fleet (\(right ? "right" : "wrong") trip)"
        case .admin(let right): return "admin (\(right ? "right" : "wrong") trip)"
        case .share(let right): return "share (\(right ? "right" : "wrong") trip)"
        }
    }

    /// The token, or nil for none. The target trip is always T1; "wrong" tokens list T2.
    func token(secret: String) -> String? {
        let now = Int64(Date().timeIntervalSince1970)
        func mint(_ scope: TokenScope, _ right: Bool, secret: String = secret, exp: Int64 = now + 3600) -> String {
            let jti = scope == .share ? "matrix-share" : nil
            return JWT.mint(TokenClaims(subject: "m", expiresAt: exp, scopes: [scope], trips: right ? ["T1"] : ["T2"], jti: jti), secret: secret)
        }
        switch self {
        case .noToken: return nil
        case .badSignature: return mint(.admin, true, secret: secret + "x")
        case .expired: return mint(.admin, true, exp: now - 120)
        case .courier(let right): return mint(.courier, right)
        case .viewer(let right): return mint(.viewer, right)
        case .fleet(let right): return mint(.fleet, right)
        case .admin(let right): return mint(.admin, right)
        case .share(let right): return mint(.share, right)
        }
    }

    var isValid: Bool {
        switch self {
        case .noToken, .badSignature, .expired: return false
        default: return true
        }
    }
    var isAdmin: Bool { if case .admin = self { return true } else { return false } }
    var isFleet: Bool { if case .fleet = self { return true } else { return false } }
    /// viewer or courier listing T1, or admin.
    var mayView: Bool {
        switch self {
        case .viewer(let right), .courier(let right): return right
        case .admin: return true
        default: return false
        }
    }
    /// What may subscribe to T1 and read it: those that may view it, and a share link for it.
    var mayFollow: Bool {
        if case .share(let right) = self { return right }
        return mayView
    }
    /// courier listing T1, or admin.
    var mayDrive: Bool {
        switch self {
        case .courier(let right): return right
        case .admin: return true
        default: return false
        }
    }
}

/// A route in Lisbon, ~1.1 km.
let authTestRoute: [[Double]] = [[-9.1420, 38.7158], [-9.1360, 38.7180], [-9.1300, 38.7200]]

/// Headers with `Authorization: Bearer`.
func bearer(_ token: String?) -> [String: String] {
    token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
}

/// PROTOCOL section 2's table, as a test: every op and route × every kind of presenter.
@Suite struct AuthMatrixTests {
    static let secret = "matrix-s3cret"
    var adminToken: String {
        JWT.mint(TokenClaims(subject: "setup", expiresAt: Int64(Date().timeIntervalSince1970) + 3600, scopes: [.admin], trips: nil), secret: Self.secret)
    }

    /// `withTestHub` on a hub with a JWT secret and trips T1 and T2.
    func withSecuredHub(_ body: (TestHub, TestHubClients) throws -> Void) throws {
        try withTestHub(configure: { $0.jwtSecret = Self.secret }) { hub, clients in
            for id in ["T1", "T2"] {
                let (status, json) = try hub.httpJSON("POST", "/v1/trips", json: ["id": id, "route": authTestRoute], headers: bearer(adminToken))
                #expect(status == 201, "setup: create \(id) answered \(status) \(json)")
            }
            try body(hub, clients)
        }
    }

    /// The WebSocket ops: what each presenter gets (a reply type, or an error code).
    static func expectedWS(_ op: String, _ who: Presenter) -> String {
        switch op {
        case "ping": return "pong"
        case "hello": return who.isValid || who == .noToken ? "welcome" : "unauthorized"
        default: break
        }
        guard who.isValid else { return "unauthorized" }
        switch op {
        case "unsubscribe": return "unsubscribed"
        case "subscribe": return who.mayFollow ? "snapshot" : "forbidden"
        case "fix": return who.mayDrive ? "ack" : "forbidden"
        case "proceed": return who.mayDrive ? "conflict" : "forbidden"  // T1 is not holding
        case "viewport": return who.isAdmin || who.isFleet ? "clusters" : "forbidden"
        default: return "?"
        }
    }

    @Test(arguments: Presenter.allCases)
    func everyOpGetsTheAnswerSection2Gives(_ who: Presenter) throws {
        try withSecuredHub { hub, clients in
            let token = who.token(secret: Self.secret)
            let connection: TestConnection
            if who.isValid, let token {
                connection = try clients.connect(path: "/v1/ws?token=\(token)")
            } else {
                if let token {
                    // A bad token on the upgrade URL is refused with 401...
                    #expect(try RawWire.upgradeStatus(port: hub.port, path: "/v1/ws?token=\(token)") == 401, "\(who)")
                }
                // ... and the same connection without it is accepted, with nothing granted.
                connection = try clients.connect()
            }
            let now = nowMillis()
            let ops: [(String, [String: Any])] = [
                ("ping", ["op": "ping"]),
                ("hello", token.map { ["op": "hello", "token": $0] } ?? ["op": "hello"]),
                ("subscribe", ["op": "subscribe", "trip": "T1"]),
                ("unsubscribe", ["op": "unsubscribe", "trip": "T1"]),
                ("fix", ["op": "fix", "trip": "T1", "lat": 38.7158, "lon": -9.1420, "ts": now, "seq": 1]),
                ("proceed", ["op": "proceed", "trip": "T1"]),
                ("viewport", ["op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10]),
            ]
            for (index, (op, message)) in ops.enumerated() {
                let reply = try connection.request(message, id: 100 + index)
                let type = reply["type"] as? String ?? "?"
                let answer = type == "error" ? reply["code"] as? String ?? "?" : type
                #expect(answer == Self.expectedWS(op, who), "\(who): \(op) answered \(reply)")
                if type == "error", let code = reply["code"] as? String, code == "unauthorized" || code == "forbidden" {
                    let text = reply["message"] as? String ?? ""
                    #expect(text.contains("token") || text.contains("trip") || text.contains("scope"), "\(who): \(op) message \(text)")
                }
            }
            // The connection stayed open through every refusal.
            #expect(try connection.request(["op": "ping"], id: 999)["type"] as? String == "pong")
        }
    }

    /// The HTTP routes: the status each presenter gets.
    static func expectedHTTP(_ route: String, _ who: Presenter) -> Int {
        if route == "GET /healthz" || route == "GET /metrics" || route == "GET /" { return 200 }
        guard who.isValid else { return 401 }
        switch route {
        case "GET /v1/trips": return 200
        case "POST /v1/trips": return who.isAdmin ? 201 : 403
        case "GET /v1/trips/T1": return who.mayFollow ? 200 : 403
        case "GET /v1/trips/T1/trail": return who.mayView ? 200 : 403
        case "POST /v1/trips/T1/fixes": return who.mayDrive ? 200 : 403
        case "POST /v1/trips/T1/proceed": return who.mayDrive ? 409 : 403
        case "GET /v1/fleet/clusters?zoom=3": return who.isAdmin || who.isFleet ? 200 : 403
        case "PUT /v1/trips/T1/route", "DELETE /v1/trips/T1": return who.isAdmin ? 200 : 403
        default: return -1
        }
    }

    @Test(arguments: Presenter.allCases)
    func everyRouteGetsTheAnswerSection2Gives(_ who: Presenter) throws {
        try withSecuredHub { hub, _ in
            let headers = bearer(who.token(secret: Self.secret))
            let routes: [(String, String, Any?)] = [
                ("GET", "/healthz", nil), ("GET", "/metrics", nil), ("GET", "/", nil),
                ("GET", "/v1/trips", nil),
                ("POST", "/v1/trips", ["id": "N1", "route": authTestRoute]),
                ("GET", "/v1/trips/T1", nil),
                ("GET", "/v1/trips/T1/trail", nil),
                ("POST", "/v1/trips/T1/fixes", ["fixes": [["lat": 38.7158, "lon": -9.1420, "ts": nowMillis(), "seq": 7]]]),
                ("POST", "/v1/trips/T1/proceed", nil),
                ("GET", "/v1/fleet/clusters?zoom=3", nil),
                ("PUT", "/v1/trips/T1/route", ["route": Array(authTestRoute.reversed())]),
                ("DELETE", "/v1/trips/T1", nil),
            ]
            for (method, path, body) in routes {
                let (status, json) = try hub.httpJSON(method, path, json: body, headers: headers)
                let route = "\(method) \(path)"
                #expect(status == Self.expectedHTTP(route, who), "\(who): \(route) answered \(status) \(json)")
                if status == 401 || status == 403 {
                    let error = json["error"] as? [String: Any]
                    #expect(error?["code"] as? String == (status == 401 ? "unauthorized" : "forbidden"), "\(who): \(route) \(json)")
                    let text = error?["message"] as? String ?? ""
                    #expect(text.contains("token") || text.contains("Authorization") || text.contains("scope") || text.contains("trip"), "\(text)")
                }
            }
        }
    }

    @Test func tripListHoldsOnlyTheTokensTripsUnlessAdminOrFleet() throws {
        try withSecuredHub { hub, _ in
            func listed(_ who: Presenter) throws -> [String] {
                let (status, json) = try hub.httpJSON("GET", "/v1/trips", headers: bearer(who.token(secret: Self.secret)))
                #expect(status == 200)
                return (json["trips"] as? [[String: Any]] ?? []).compactMap { $0["trip"] as? String ?? $0["id"] as? String }
            }
            #expect(try listed(.viewer(right: true)) == ["T1"])
            #expect(try listed(.courier(right: false)) == ["T2"])
            #expect(try listed(.fleet(right: true)) == ["T1", "T2"])
            #expect(try listed(.admin(right: false)) == ["T1", "T2"])
            let star = JWT.mint(TokenClaims(subject: nil, expiresAt: Int64(Date().timeIntervalSince1970) + 60, scopes: [], trips: nil), secret: Self.secret)
            let (_, json) = try hub.httpJSON("GET", "/v1/trips", headers: bearer(star))
            #expect((json["trips"] as? [Any])?.count == 2)
        }
    }

    @Test func authorizationHeaderTricksAreUnauthorized() throws {
        try withSecuredHub { hub, _ in
            let good = try #require(Presenter.admin(right: true).token(secret: Self.secret))
            for header in ["Basic \(good)", "Bearer", "Bearer ", "bearer\(good)", "Token \(good)", good, "Bearer \(good)x", "Bearer \(good) \(good)"] {
                let (status, json) = try hub.httpJSON("GET", "/v1/trips", headers: ["Authorization": header])
                #expect(status == 401, "Authorization: \(header.prefix(20))… answered \(status) \(json)")
            }
            for header in ["Bearer \(good)", "bearer \(good)", "BEARER   \(good)"] {
                #expect(try hub.httpJSON("GET", "/v1/trips", headers: ["Authorization": header]).status == 200, "\(header.prefix(12))")
            }
            // A token in the query string is for the WebSocket upgrade only.
            #expect(try hub.httpJSON("GET", "/v1/trips?token=\(good)").status == 401)
        }
    }

    /// PROTOCOL 4: unauthorized > bad_request > too_large > forbidden > not_found > conflict.
    @Test func errorPrecedenceFollowsSection4() throws {
        try withTestHub(configure: { $0.jwtSecret = Self.secret; $0.maxSubscriptions = 1; $0.maxBodyBytes = 4096 }) { hub, clients in
            _ = try hub.httpJSON("POST", "/v1/trips", json: ["id": "T1", "route": authTestRoute], headers: bearer(adminToken))
            let viewer = bearer(Presenter.viewer(right: true).token(secret: Self.secret))
            let courierT2 = bearer(Presenter.courier(right: false).token(secret: Self.secret))
            // No token beats a malformed body and a body over the limit.
            #expect(try hub.http("POST", "/v1/trips", body: Data("{oops".utf8)).status == 401)
            #expect(try hub.http("POST", "/v1/trips", body: Data(repeating: 32, count: 10_000)).status == 401)
            // A malformed or oversized request beats the wrong scope.
            #expect(try hub.http("POST", "/v1/trips", body: Data("{oops".utf8), headers: viewer).status == 400)
            #expect(try hub.http("POST", "/v1/trips/T1/fixes", body: Data(#"{"fixes":[{"lat":1}]}"#.utf8), headers: viewer).status == 400)
            #expect(try hub.http("GET", "/v1/fleet/clusters?zoom=99", headers: viewer).status == 400)
            #expect(try hub.http("GET", "/v1/trips/T1/trail?from=x", headers: courierT2).status == 400)
            #expect(try hub.http("POST", "/v1/trips", body: Data(repeating: 32, count: 10_000), headers: viewer).status == 413)
            let tooMany = (0..<10_001).map { [-9.0 - Double($0) * 0.00001, 38.7] }
            let (tooManyStatus, _) = try hub.http("POST", "/v1/trips", json: ["route": tooMany], headers: viewer)
            #expect(tooManyStatus == 413)
            // The wrong trip beats a trip that does not exist, and a state conflict.
            #expect(try hub.http("POST", "/v1/trips/T9/proceed", headers: courierT2).status == 403)
            #expect(try hub.http("POST", "/v1/trips/T1/proceed", headers: courierT2).status == 403)
            let courierT9 = JWT.mint(TokenClaims(subject: nil, expiresAt: Int64(Date().timeIntervalSince1970) + 60, scopes: [.courier], trips: ["T9"]), secret: Self.secret)
            #expect(try hub.http("POST", "/v1/trips/T9/proceed", headers: bearer(courierT9)).status == 404)

            let anonymous = try clients.connect()
            // Without a token, even a malformed frame is unauthorized (hello and ping excepted).
            anonymous.sendText("{not json")
            #expect(try anonymous.next(type: "error")["code"] as? String == "unauthorized")
            #expect(try anonymous.request(["op": "subscribe", "trip": 5], id: 1)["code"] as? String == "unauthorized")
            #expect(try anonymous.request(["op": "hello", "token": 5], id: 2)["code"] as? String == "bad_request")
            #expect(try anonymous.request(["op": "ping", "id": 3], id: 3)["type"] as? String == "pong")
            let token = try #require(Presenter.viewer(right: true).token(secret: Self.secret))
            let member = try clients.connect(path: "/v1/ws?token=\(token)")
            #expect(try member.request(["op": "subscribe", "trip": "bad/id"], id: 1)["code"] as? String == "bad_request")
            #expect(try member.request(["op": "subscribe", "trip": "T2"], id: 2)["code"] as? String == "forbidden")
            #expect(try member.request(["op": "subscribe", "trip": "T1"], id: 3)["type"] as? String == "snapshot")
            // At the subscription limit, too_large comes before forbidden.
            #expect(try member.request(["op": "subscribe", "trip": "T2"], id: 4)["code"] as? String == "too_large")
            #expect(try member.request(["op": "fix", "trip": "T9", "lat": 1, "lon": 1, "ts": nowMillis()], id: 5)["code"] as? String == "forbidden")
        }
    }
}
