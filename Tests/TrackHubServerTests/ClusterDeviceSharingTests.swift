import Foundation
import Testing
import TrackHubRedis
import TrackHubTesting
@testable import TrackHubServer

/// PROTOCOL 11 in a cluster (docs/cluster.md): devices are in the shared log, so a device
/// registered through one node sends its fixes through any, every node shows the same
/// `last_seen`, and a node that starts later knows the devices from the snapshot and the log.
@Suite struct ClusterDeviceSharingTests {
    static let phone = "phone-shared-0123456789"
    static let loose = "loose-shared-0123456789"

    static func node(_ redis: RedisProcess, snapshotEveryMs: Int64 = 1000) throws -> TestHub {
        try TestHub {
            $0.clusterSeeds = [redis.address]
            $0.clusterPartitions = 4
            $0.clusterSnapshotIntervalMs = snapshotEveryMs
        }
    }

    static func device(_ hub: TestHub, _ id: String) throws -> (status: Int, json: [String: Any]) {
        try hub.httpJSON("GET", "/v1/devices/\(id)")
    }

    /// `last_seen` and `last_position` of a device on a node, comparable across nodes.
    static func sighting(_ hub: TestHub, _ id: String) throws -> String {
        let json = try device(hub, id).json
        let position = json["last_position"] as? [String: Any]
        return "\(json["last_seen"] as? Int64 ?? -1) \(position?["lat"] as? Double ?? 0) \(position?["lon"] as? Double ?? 0)"
    }

    @Test func aDeviceRegisteredOnOneNodeIsSharedByEveryNode() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let a = try Self.node(redis, snapshotEveryMs: 1000)
        defer { a.stop() }
        let b = try Self.node(redis)
        defer { b.stop() }
        let c = try Self.node(redis)
        defer { c.stop() }
        try a.createLisbonTrip("shared")
        let clients = try TestClients()
        defer { clients.stop() }
        try waitUntil("node C knows the trip") { try c.httpJSON("GET", "/v1/trips/shared").status == 200 }
        let viewer = try clients.connect(port: c.port)
        _ = try viewer.subscribe("shared", id: 1, ["mode": "segments"])

        #expect(try a.httpJSON("PUT", "/v1/devices/\(Self.phone)", json: ["trip": "shared", "name": "Ana"]).status == 200)
        // Straight to B, no waiting: B looks again once it has applied the log up to the fix.
        let ts = nowMillis() - 5000
        let lat = Lisbon.lat(alongM: 50)
        #expect(try b.http("GET", "/v1/osmand?id=\(Self.phone)&lat=\(lat)&lon=\(Lisbon.lon)&timestamp=\(ts)&batt=61").status == 200)
        let segment = try viewer.next(type: "segment")
        #expect(segment["trip"] as? String == "shared")
        for node in [a, b, c] {
            try waitUntil("the fix in the trail on every node") {
                let properties = try node.httpJSON("GET", "/v1/trips/shared/trail").json["properties"] as? [String: Any]
                return properties?["ts"] as? [Int64] == [ts] && properties?["battery"] as? [Double] == [61]
            }
        }
        let seenOnB = try Self.sighting(b, Self.phone)
        #expect(try Self.device(b, Self.phone).json["last_seen"] as? Int64 != nil)
        try waitUntil("the same last_seen on every node") { try [a, c].allSatisfy { try Self.sighting($0, Self.phone) == seenOnB } }

        // A device bound to no trip: its sighting is a log entry of its own.
        #expect(try c.httpJSON("PUT", "/v1/devices/\(Self.loose)", json: ["trip": NSNull()]).status == 200)
        #expect(try a.http("POST", "/v1/owntracks/\(Self.loose)", json: ["_type": "location", "lat": 38.71, "lon": -9.15, "tst": ts / 1000]).status == 200)
        let looseOnA = try Self.sighting(a, Self.loose)
        #expect(looseOnA.contains("38.71"))
        try waitUntil("the loose device's last_seen on every node") { try [b, c].allSatisfy { try Self.sighting($0, Self.loose) == looseOnA } }

        // Forgotten on C: every node refuses its fixes as an unknown device's.
        #expect(try c.httpJSON("DELETE", "/v1/devices/\(Self.phone)").status == 200)
        #expect(try b.httpJSON("DELETE", "/v1/devices/\(Self.phone)").status == 404, "B decides in log order, after C's delete")
        for node in [a, b] {
            try waitUntil("the delete applied") { try Self.device(node, Self.phone).status == 404 }
            #expect(try node.http("GET", "/v1/osmand?id=\(Self.phone)&lat=\(lat)&lon=\(Lisbon.lon)&timestamp=\(ts + 1000)").status == 404)
        }

        // A snapshot written after all that holds the devices; with the log trimmed away a new
        // node knows them from it alone.
        let redisClient = try RedisConnection(redis.address, timeoutMs: 2000)
        try waitUntil("a snapshot with the loose device's sighting", timeout: 20) {
            guard let bytes = try redisClient.command([Array(redis: "GET"), Array(redis: ClusterLog.metaSnapshotKey)]).bytes,
                let devices = try ClusterSnapshot.decode(bytes).devices
            else { return false }
            return devices.device(Self.loose)?.lastSeen != nil && devices.device(Self.phone) == nil
        }
        for partition in 0..<4 {
            _ = try redisClient.command([Array(redis: "XTRIM"), Array(redis: ClusterLog.streamKey(partition)), Array(redis: "MAXLEN"), Array(redis: "0")])
        }
        let late = try Self.node(redis)
        defer { late.stop() }
        #expect(try Self.sighting(late, Self.loose) == looseOnA)
        #expect(try Self.device(late, Self.phone).status == 404)
        #expect(try late.http("POST", "/v1/owntracks/\(Self.loose)", json: ["_type": "location", "lat": 38.72, "lon": -9.15, "tst": ts / 1000 + 1]).status == 200)
        let movedOnLate = try Self.sighting(late, Self.loose)
        try waitUntil("the late node's fix seen on A") { try Self.sighting(a, Self.loose) == movedOnLate }
    }
}
