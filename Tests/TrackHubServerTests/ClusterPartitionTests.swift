import Foundation
import Testing
import TrackHubCore
import TrackHubRedis
import TrackHubSync
@testable import TrackHubServer
import TrackHubTesting

/// Partition ownership (PROTOCOL 15) against a real `redis-server`, and the pure pieces of
/// tailing on demand (skipped where Redis is not installed).
@Suite(.serialized) struct ClusterPartitionTests {
    /// Lease keepers of three nodes with a 1 s lease, each report kept.
    final class Owned: Sendable {
        let set = HubMutex<Set<Int>>([])
    }

    final class Node: Sendable {
        let owned = Owned()
        let leases: PartitionLeases
        init(_ redis: RedisProcess, _ name: String, partitions: Int) {
            let owned = self.owned
            leases = PartitionLeases(seeds: [redis.address], nodeID: name, partitions: partitions, leaseMs: 1000) { round in
                owned.set.withLock { $0 = round.owned ?? [] }
            }
        }
        var count: Int { owned.set.withLock { $0.count } }
    }

    @Test func leasesSpreadTheTakeOverAndTheJoin() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let n = 16
        var nodes = ["a", "b", "c"].map { Node(redis, $0, partitions: n) }
        for node in nodes { node.leases.start() }
        func settled(_ live: [Node]) -> Bool {
            let sets = live.map { $0.owned.set.withLock { $0 } }
            let all = sets.reduce(into: Set<Int>()) { $0.formUnion($1) }
            let share = Double(n) / Double(live.count)
            // Every partition owned once, each node between half and twice its share.
            return all.count == n && sets.map(\.count).reduce(0, +) == n
                && sets.allSatisfy { Double($0.count) >= share / 2 && Double($0.count) <= share * 2 }
        }
        try waitUntil("16 partitions spread over three nodes", timeout: 20) { settled(nodes) }

        // One stops (a clean stop gives its leases up): the other two take them.
        nodes[2].leases.stop()
        nodes.removeLast()
        try waitUntil("the two left own every partition", timeout: 20) { settled(nodes) }

        // A joining node takes its share.
        let d = Node(redis, "d", partitions: n)
        d.leases.start()
        nodes.append(d)
        try waitUntil("a joining node takes partitions", timeout: 20) { settled(nodes) && d.count > 0 }
        for node in nodes { node.leases.stop() }
    }

    @Test func theReaderSkipsTripEntriesOfPartitionsNotAppliedWithoutDecoding() {
        let fix = ClusterCommand(kind: .fixes, trip: "t1", fixes: [FixInput(lat: 1, lon: 2, ts: 3)])
        let deviceFix = ClusterCommand(kind: .fixes, trip: "t1", fixes: [FixInput(lat: 1, lon: 2, ts: 3)], device: "d1")
        let create = ClusterCommand(kind: .create, trip: "t1", body: #"{"id":"t1","rider":{"name":"\"k\":\"share"}}"#)
        #expect(!RedisCommandLog.mayBeDeviceOrShare(fix.encoded()))
        #expect(!RedisCommandLog.mayBeDeviceOrShare(create.encoded()), "a quote inside a string is escaped")
        #expect(RedisCommandLog.mayBeDeviceOrShare(deviceFix.encoded()))
        #expect(RedisCommandLog.mayBeDeviceOrShare(ClusterCommand(kind: .putDevice, device: "d1").encoded()))
        #expect(RedisCommandLog.mayBeDeviceOrShare(ClusterCommand(kind: .revokeShare, jti: "j").encoded()))
    }

    @Test func fleetPositionsRoundTrip() {
        let members = [FleetMember(id: "a.b:c-1", position: GeoPoint(lat: 60.17, lon: 24.94), status: "moving", bearing: 90.5),
                       FleetMember(id: "x", position: GeoPoint(lat: -33.9, lon: 151.2), status: "arrived", bearing: 0)]
        #expect(ClusterFleet.decode(ClusterFleet.encode(members)) == members)
        #expect(ClusterFleet.decode(Array("garbage\n1 2\n".utf8)).isEmpty)
    }
}
