import Foundation
import Testing
import TrackHubRedis
import TrackHubTesting
@testable import TrackHubServer

/// PROTOCOL 13 in a cluster (docs/cluster.md, docs/share-links.md): share links are in the
/// shared log, so a link issued through one node works on every node, a revocation through
/// any is honoured by all (their share subscribers are unsubscribed), and a node that
/// starts later knows the revocation from the log or the snapshot.
@Suite struct ClusterShareLinkTests {
    static let secret = "cluster-share-s3cret"
    static var admin: [String: String] {
        bearer(JWT.mint(TokenClaims(subject: "a", expiresAt: Int64(Date().timeIntervalSince1970) + 3600, scopes: [.admin], trips: nil), secret: secret))
    }
    static let route: [[Double]] = [[Lisbon.lon, Lisbon.southLat], [Lisbon.lon, Lisbon.lat(alongM: 2000)]]

    static func node(_ redis: RedisProcess, snapshotEveryMs: Int64 = 1000) throws -> TestHub {
        try TestHub {
            $0.jwtSecret = secret
            $0.clusterSeeds = [redis.address]
            $0.clusterPartitions = 4
            $0.clusterSnapshotIntervalMs = snapshotEveryMs
        }
    }

    static func share(_ hub: TestHub, _ trip: String) throws -> (token: String, jti: String) {
        let (status, json) = try hub.httpJSON("POST", "/v1/trips/\(trip)/share", json: ["ttl_s": 3600], headers: admin)
        #expect(status == 201, "share answered \(status) \(json)")
        return (try #require(json["token"] as? String), try #require(json["jti"] as? String))
    }

    /// PROTOCOL 17: the log carries a link's stop claims, so the answering node mints them.
    @Test func aStopLinkIssuedThroughTheLogCarriesItsClaims() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let a = try Self.node(redis)
        defer { a.stop() }
        #expect(try a.httpJSON("POST", "/v1/trips", json: ["id": "T1", "route": Self.route, "rider": ["name": "Alex"]], headers: Self.admin).status == 201)
        let (status, json) = try a.httpJSON("POST", "/v1/trips/T1/share", json: ["stop": "destination", "visible_within_stops": 4], headers: Self.admin)
        #expect(status == 201, "\(status) \(json)")
        let token = try #require(json["token"] as? String)
        let claims = try JWT.verify(token, secret: Self.secret, nowMs: nowMillis()).get()
        #expect(claims.stop == "destination" && claims.visibleWithinStops == 4)
    }

    @Test func aLinkIssuedOnOneNodeIsKnownAndRevokedOnEveryNode() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let a = try Self.node(redis, snapshotEveryMs: 1000)
        defer { a.stop() }
        let b = try Self.node(redis)
        defer { b.stop() }
        var c = try Self.node(redis)
        defer { c.stop() }
        // Created on A, shared through C at once: C waits for the log to bring the trip.
        #expect(try a.httpJSON("POST", "/v1/trips", json: ["id": "T1", "route": Self.route, "rider": ["name": "Alex"]], headers: Self.admin).status == 201)
        let link = try Self.share(c, "T1")
        let other = try Self.share(a, "T1")

        // Issued on C, revoked through B straight away: B waits for the log to bring the link.
        #expect(try b.httpJSON("DELETE", "/v1/shares/\(other.jti)", headers: Self.admin).status == 200)
        #expect(try b.httpJSON("DELETE", "/v1/shares/unknown-jti", headers: Self.admin).status == 404)

        for node in [a, b, c] {
            let (status, trip) = try node.httpJSON("GET", "/v1/trips/T1", headers: bearer(link.token))
            #expect(status == 200 && trip["rider"] as? [String: String] == ["name": "Alex"], "\(status) \(trip)")
            try waitUntil("the other link refused") { try node.httpJSON("GET", "/v1/trips/T1", headers: bearer(other.token)).status == 401 }
        }
        let clients = try TestClients()
        defer { clients.stop() }
        let onA = try clients.connect(port: a.port, path: "/v1/ws?token=\(link.token)")
        try onA.subscribe("T1", id: 1)
        let onC = try clients.connect(port: c.port, path: "/v1/ws?token=\(link.token)")
        try onC.subscribe("T1", id: 1)

        // Revoked on B: A and C refuse it and end their share subscribers.
        let (status, revoked) = try b.httpJSON("DELETE", "/v1/shares/\(link.jti)", headers: Self.admin)
        #expect(status == 200 && revoked["jti"] as? String == link.jti && revoked["revoked"] as? Bool == true)
        for customer in [onA, onC] {
            let end = try customer.next(type: "unsubscribed")
            #expect(end["reason"] as? String == "revoked" && end["trip"] as? String == "T1")
            #expect(try customer.request(["op": "subscribe", "trip": "T1"], id: 2)["code"] as? String == "unauthorized")
        }
        for node in [a, b, c] {
            #expect(try node.httpJSON("GET", "/v1/trips/T1", headers: bearer(link.token)).status == 401)
            #expect(try RawWire.upgradeStatus(port: node.port, path: "/v1/ws?token=\(link.token)") == 401)
        }
        // Again through A: the same answer, decided in log order.
        #expect(try a.httpJSON("DELETE", "/v1/shares/\(link.jti)", headers: Self.admin).status == 200)

        // C restarts (its own store wiped): once it has replayed the log (healthz `catching_up`
        // until then) it refuses the tokens again; a node that knew nothing would accept them.
        c.stop()
        c = try Self.node(redis)
        let restarted = c
        try waitUntil("the restarted node caught up") { try restarted.httpJSON("GET", "/healthz").status == 200 }
        for token in [link.token, other.token] {
            try waitUntil("the restarted node refuses the revoked link") {
                try restarted.httpJSON("GET", "/v1/trips/T1", headers: bearer(token)).status == 401
            }
        }
        #expect(try restarted.httpJSON("DELETE", "/v1/shares/\(link.jti)", headers: Self.admin).status == 200, "it knows the link")

        // A snapshot holds the revoked links; with the log trimmed away a new node knows them
        // from it alone. (The trip comes from its partition's own snapshot, written by that
        // partition's owner on its own schedule: trimmed before it holds T1, the log would
        // take the trip with it, and the new node would rightly answer 404.)
        let redisClient = try RedisConnection(redis.address, timeoutMs: 2000)
        try waitUntil("a snapshot with the revoked links", timeout: 20) {
            guard let bytes = try redisClient.command([Array(redis: "GET"), Array(redis: ClusterLog.metaSnapshotKey)]).bytes,
                let shares = try ClusterSnapshot.decode(bytes).shares
            else { return false }
            return Set(shares.filter { $0.revokedAt != nil }.map(\.jti)) == [link.jti, other.jti]
        }
        let tripsPartition = ClusterLog.partition(of: "T1", partitions: 4)
        try waitUntil("a snapshot of T1's partition that holds T1", timeout: 20) {
            guard let bytes = try redisClient.command([Array(redis: "GET"), Array(redis: PartitionSnapshot.key(tripsPartition))]).bytes else { return false }
            return try JSONDecoder().decode(PartitionSnapshot.self, from: Data(bytes)).trips.contains { $0.trip.id == "T1" }
        }
        for partition in 0..<4 {
            _ = try redisClient.command([Array(redis: "XTRIM"), Array(redis: ClusterLog.streamKey(partition)), Array(redis: "MAXLEN"), Array(redis: "0")])
        }
        let late = try Self.node(redis)
        defer { late.stop() }
        #expect(try late.httpJSON("GET", "/v1/trips/T1", headers: bearer(link.token)).status == 401)
        let fresh = try Self.share(late, "T1")
        #expect(try a.httpJSON("DELETE", "/v1/shares/\(fresh.jti)", headers: Self.admin).status == 200)
    }

    @Test func shareEntriesGoToTheLinksPartitionAndRoundTrip() throws {
        let issue = ClusterCommand(kind: .share, trip: "T9", origin: "node-a", request: 7, jti: "j-1", expiresAt: 1_700_000_600_000, issuedAt: 1_700_000_000)
        let revoke = ClusterCommand(kind: .revokeShare, origin: "node-b", request: 8, jti: "j-1")
        #expect(issue.partitionKey == "j-1" && revoke.partitionKey == "j-1")
        #expect(ClusterCommand.decode(issue.encoded()) == issue && ClusterCommand.decode(revoke.encoded()) == revoke)
        #expect(String(decoding: revoke.encoded(), as: UTF8.self).contains(#""k":"share-revoke""#))
    }

    @Test func anOldSnapshotWithoutLinksStillLoads() throws {
        let old = #"{"version":1,"partitions":2,"positions":[],"watermark":5,"writtenBy":"n","trips":[]}"#
        let snapshot = try ClusterSnapshot.decode(Array(old.utf8))
        #expect(snapshot.shares == nil && snapshot.devices == nil)
    }
}
