import Foundation
import Testing
import TrackHubCLI
import TrackHubLWS
import TrackHubSync
@testable import TrackHubServer
import TrackHubTesting

/// A token's life on a connection (PROTOCOL section 2), open mode, TLS and `trackhub token`.
@Suite struct AuthLifecycleTests {
    static let secret = "life-s3cret-0123456789"

    static func token(_ scopes: Set<TokenScope>, _ trips: Set<String>?, exp: Int64? = nil, secret: String = secret) -> String {
        JWT.mint(TokenClaims(subject: "t", expiresAt: exp ?? Int64(Date().timeIntervalSince1970) + 3600, scopes: scopes, trips: trips), secret: secret)
    }

    /// `withTestHub` on a hub with a JWT secret and trips T1 and T2.
    func withSecuredHub(configure: (inout HubConfig) -> Void = { _ in }, _ body: (TestHub, TestHubClients) throws -> Void) throws {
        try withTestHub(configure: { $0.jwtSecret = Self.secret; configure(&$0) }) { hub, clients in
            for id in ["T1", "T2"] {
                let status = try hub.http("POST", "/v1/trips", json: ["id": id, "route": authTestRoute], headers: bearer(Self.token([.admin], nil))).status
                #expect(status == 201)
            }
            try body(hub, clients)
        }
    }

    @Test func upgradeWithABadTokenIsRefused401AndAGoodOneAccepted() throws {
        try withSecuredHub { hub, _ throws in
            #expect(try RawWire.upgradeStatus(port: hub.port, path: "/v1/ws?token=\(Self.token([.viewer], ["T1"]))") == 101)
            #expect(try RawWire.upgradeStatus(port: hub.port, path: "/v1/ws") == 101)
            for bad in ["", "garbage", Self.token([.viewer], ["T1"], secret: "other"), Self.token([.admin], nil, exp: Int64(Date().timeIntervalSince1970) - 60)] {
                #expect(try RawWire.upgradeStatus(port: hub.port, path: "/v1/ws?token=\(bad)") == 401, "token \(bad.prefix(16))")
            }
        }
    }

    @Test func helloReplacesTheTokenAndEndsWhatTheNewOneDoesNotCover() throws {
        try withSecuredHub { hub, clients in
            let connection = try clients.connect(path: "/v1/ws?token=\(Self.token([.viewer, .fleet], ["T1", "T2"]))")
            #expect(try connection.request(["op": "subscribe", "trip": "T1"], id: 1)["type"] as? String == "snapshot")
            #expect(try connection.request(["op": "subscribe", "trip": "T2"], id: 2)["type"] as? String == "snapshot")
            #expect(try connection.request(["op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10], id: 3)["type"] as? String == "clusters")
            // A refused hello changes nothing.
            let refused = try connection.request(["op": "hello", "token": Self.token([.viewer], [], secret: "other")], id: 4)
            #expect(refused["code"] as? String == "unauthorized")
            #expect(try connection.request(["op": "subscribe", "trip": "T2"], id: 5)["type"] as? String == "snapshot")
            // A valid one replaces it: T2 and the viewport are no longer covered.
            #expect(try connection.request(["op": "hello", "token": Self.token([.viewer], ["T1"])], id: 6)["type"] as? String == "welcome")
            let ended = try connection.next(type: "unsubscribed")
            #expect(ended["trip"] as? String == "T2" && ended["reason"] as? String == "forbidden" && ended["re"] == nil)
            #expect(try connection.request(["op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10], id: 7)["code"] as? String == "forbidden")
            let viewportKey = try onServiceThread(hub) { $0.services.fanout.sessions.values.first?.viewportKey }
            #expect(viewportKey == nil)
            // T1 is still followed: an event on it arrives.
            let courier = try clients.connect(path: "/v1/ws?token=\(Self.token([.courier], ["T1", "T2"]))")
            #expect(try courier.request(["op": "fix", "trip": "T2", "lat": 38.7158, "lon": -9.1420, "ts": nowMillis(), "seq": 1], id: 1)["type"] as? String == "ack")
            #expect(try courier.request(["op": "fix", "trip": "T1", "lat": 38.7158, "lon": -9.1420, "ts": nowMillis(), "seq": 1], id: 2)["type"] as? String == "ack")
            let frame = try connection.next { ($0["type"] as? String == "frame" || $0["type"] as? String == "segment") }
            #expect(frame["trip"] as? String == "T1")
            // A ping is answered after everything queued before it: no T2 message came first.
            #expect(try connection.request(["op": "ping"], id: 8)["type"] as? String == "pong")
            #expect(!connection.drain().contains { $0["trip"] as? String == "T2" })
        }
    }

    @Test func theConnectionClosesWith1008OnceTheTokenExpires() throws {
        try withSecuredHub { hub, clients in
            // exp 27 s ago: valid for 2-3 more seconds, thanks to the 30 s leeway (exp is in whole
            // seconds: 29 s ago left anywhere between 0 and 1 s, too little for a loaded machine).
            let almost = Self.token([.viewer], ["T1"], exp: Int64(Date().timeIntervalSince1970) - 27)
            let connection = try clients.connect(path: "/v1/ws?token=\(almost)")
            #expect(try connection.request(["op": "subscribe", "trip": "T1"], id: 1)["type"] as? String == "snapshot")
            #expect(try connection.waitClosed(timeout: 10) == 1008)
            #expect(connection.closeInfo?.reason == "token expired")
            // A hello with a fresh token in time keeps the connection open.
            let soonExpired = Self.token([.viewer], ["T1"], exp: Int64(Date().timeIntervalSince1970) - 27)
            let renewed = try clients.connect(path: "/v1/ws?token=\(soonExpired)")
            let witness = try clients.connect(path: "/v1/ws?token=\(soonExpired)")
            #expect(try renewed.request(["op": "hello", "token": Self.token([.viewer], ["T1"])], id: 1)["type"] as? String == "welcome")
            // The witness, with the same old token and no renewal, is closed once it expired...
            #expect(try witness.waitClosed(timeout: 10) == 1008)
            // ...and the renewed connection outlives that moment.
            #expect(try renewed.request(["op": "ping"], id: 2)["type"] as? String == "pong")
        }
    }

    @Test func aConnectionWithoutAValidTokenIsClosedAfterTheAuthTimeout() throws {
        try withSecuredHub(configure: { $0.authTimeoutMs = 400 }) { hub, clients in
            let silent = try clients.connect()
            let late = try clients.connect()
            #expect(try late.request(["op": "hello", "token": "nonsense"], id: 1)["code"] as? String == "unauthorized")
            let timely = try clients.connect()
            let witness = try clients.connect()
            #expect(try timely.request(["op": "hello", "token": Self.token([.viewer], ["T1"])], id: 1)["type"] as? String == "welcome")
            #expect(try silent.waitClosed(timeout: 5) == 1008)
            #expect(try late.waitClosed(timeout: 5) == 1008)
            // The witness connected with `timely` and never sent a token: once it is closed, the
            // timeout has passed for `timely` too.
            #expect(try witness.waitClosed(timeout: 10) == 1008)
            #expect(try timely.request(["op": "subscribe", "trip": "T1"], id: 2)["type"] as? String == "snapshot")
        }
    }

    @Test func openModeIgnoresTokensAndAllowsEverything() throws {
        try withTestHub(configure: { $0.authTimeoutMs = 200 }) { hub, clients in
            #expect(try RawWire.upgradeStatus(port: hub.port, path: "/v1/ws?token=garbage") == 101)
            let connection = try clients.connect(path: "/v1/ws?token=garbage")
            #expect(try connection.request(["op": "hello", "token": "garbage"], id: 1)["type"] as? String == "welcome")
            #expect(try connection.request(["op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10], id: 2)["type"] as? String == "clusters")
            #expect(try hub.http("POST", "/v1/trips", json: ["id": "T1", "route": authTestRoute], headers: ["Authorization": "Bearer garbage"]).status == 201)
            try hub.waitForHubTime(milliseconds: 800)  // longer than the auth timeout: it does not apply
            #expect(try connection.request(["op": "subscribe", "trip": "T1"], id: 3)["type"] as? String == "snapshot")
        }
    }

    @Test func tlsServesHTTPSAndWSS() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trackhub-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let openssl = try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                                   "-days", "1", "-subj", "/CN=127.0.0.1"])
        #expect(openssl.status == 0, "\(openssl.output)")
        let hub = try TestHub { $0.tlsCertPath = cert; $0.tlsKeyPath = key; $0.jwtSecret = Self.secret }
        defer { hub.stop() }
        let token = Self.token([.admin], nil)
        // https:// with curl (the certificate is self-signed: -k).
        let health = try run("/usr/bin/curl", ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(hub.port)/healthz"])
        #expect(health.output == "200")
        let list = try run("/usr/bin/curl", ["-sk", "-H", "Authorization: Bearer \(token)", "https://127.0.0.1:\(hub.port)/v1/trips"])
        #expect(list.output.contains("\"trips\""), "\(list.output)")
        let anonymous = try run("/usr/bin/curl", ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(hub.port)/v1/trips"])
        #expect(anonymous.output == "401")
        // Plain HTTP on the TLS port gets no answer.
        #expect((try? RawWire.httpStatus(port: hub.port, request: Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))) ?? 0 != 200)
        // wss:// with the lws client.
        let clients = try TestClients()
        defer { clients.stop() }
        let id = clients.host.connect(WebSocketTarget(host: "127.0.0.1", port: hub.port, path: "/v1/ws?token=\(token)", useTLS: true))
        let connection = TestConnection(clients: clients, id: id)
        var pong: [String: Any]?
        for attempt in 0..<50 where pong == nil {
            try connection.send(["op": "ping", "id": attempt])
            pong = try? connection.next("pong", timeout: 0.2) { $0["type"] as? String == "pong" }
        }
        #expect(pong != nil, "no pong over wss")
    }

    @Test func tokenCommandMintsTokensTheHubAccepts() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("trackhub").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return }  // not built in this configuration
        let minted = try run(binary, ["token", "--secret", Self.secret, "--scope", "viewer,courier", "--trip", "T1", "--ttl", "10m"])
        #expect(minted.status == 0)
        let claims = try JWT.verify(minted.output.trimmingCharacters(in: .whitespacesAndNewlines), secret: Self.secret, nowMs: nowMillis()).get()
        #expect(claims.scopes == [.viewer, .courier] && claims.trips == ["T1"] && claims.subject == "cli")
        let ttl = claims.expiresAt - Int64(Date().timeIntervalSince1970)
        #expect(ttl > 590 && ttl <= 600)
        let star = try run(binary, ["token", "--scope", "fleet", "--trip", "*", "--sub", "ops"], environment: ["TRACKHUB_JWT_SECRET": Self.secret])
        let starClaims = try JWT.verify(star.output.trimmingCharacters(in: .whitespacesAndNewlines), secret: Self.secret, nowMs: nowMillis()).get()
        #expect(starClaims.trips == nil && starClaims.subject == "ops" && starClaims.expiresAt - Int64(Date().timeIntervalSince1970) > 3590)
        let noTrips = try run(binary, ["token", "--secret", Self.secret, "--scope", "viewer"])
        #expect(try JWT.verify(noTrips.output.trimmingCharacters(in: .whitespacesAndNewlines), secret: Self.secret, nowMs: nowMillis()).get().trips == [])
        let s = Self.secret
        for bad in [["token", "--scope", "viewer"], ["token", "--secret", s], ["token", "--secret", s, "--scope", "root"],
                    ["token", "--secret", s, "--scope", "viewer", "--ttl", "soon"], ["token", "--secret", s, "--scope", "viewer", "--trip", "a/b"],
                    ["token", "--secret", "x", "--scope", "viewer"]] {  // under 16 bytes (PROTOCOL 14)
            let result = try run(binary, bad, environment: [:])
            #expect(result.status == 2, "\(bad)")
        }
    }

    // MARK: - Helpers

    func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        // ChildProcess, not Foundation's Process: see its comment.
        let child = try ChildProcess.spawn(path, arguments, environment: environment, captureOutput: true, quietErrors: true)
        let data = child.readOutput()
        return (child.wait(), String(decoding: data, as: UTF8.self))
    }

    /// Reads hub state on its service thread.
    func onServiceThread<T: Sendable>(_ hub: TestHub, _ read: @escaping @Sendable (Hub) -> T) throws -> T {
        let box = HubMutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let target = hub.hub
        target.services.inbox.run {
            box.withLock { $0 = read(target) }
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success, let value = box.withLock({ $0 }) else {
            throw RawWire.Failure(description: "service thread did not answer")
        }
        return value
    }
}
