import Foundation
import Testing
import TrackHubLWS
import TrackHubRedis
@testable import TrackHubServer
import TrackHubTesting

/// The cadence service's bounded state (CourierConnections, AskedIntervals) and the cluster's
/// exchange of watched trips (ClusterWatchers, against a real redis-server where installed).
@Suite struct CadenceStateTests {
    static func connection(_ n: UInt64) -> ConnectionID { ConnectionID(raw: n) }

    @Test func theLatestSenderIsTheCourierAndBothBoundsForgetTheLeastRecent() {
        var couriers = CourierConnections()
        let a = Self.connection(1), b = Self.connection(2)
        let first = couriers.noteFix(of: "T1", from: a, now: 1)
        let again = couriers.noteFix(of: "T1", from: a, now: 2)  // already a sender
        let second = couriers.noteFix(of: "T1", from: b, now: 3)
        #expect(first && !again && second)
        #expect(couriers.courier(of: "T1") == b)
        let back = couriers.noteFix(of: "T1", from: a, now: 4)
        #expect(!back && couriers.courier(of: "T1") == a)
        // Senders per trip: the fifth forgets the least recent one.
        for n in 3...5 { _ = couriers.noteFix(of: "T1", from: Self.connection(UInt64(n)), now: 4 + Int64(n)) }
        #expect(couriers.senders(of: "T1").count == CourierConnections.maxSendersPerTrip)
        #expect(!couriers.senders(of: "T1").contains(b))
        // Trips per connection: past the bound, its least recent trip is forgotten.
        let loader = Self.connection(9)
        for t in 0...CourierConnections.maxTripsPerConnection {
            _ = couriers.noteFix(of: "L\(t)", from: loader, now: 100 + Int64(t))
        }
        #expect(couriers.senders(of: "L0").isEmpty)
        #expect(couriers.courier(of: "L\(CourierConnections.maxTripsPerConnection)") == loader)
        couriers.setTold(.init(intervalMs: 2000, watched: true), "L5", on: loader)
        let gone = couriers.remove(loader)
        #expect(gone.count == CourierConnections.maxTripsPerConnection)
        #expect(gone.first { $0.trip == "L5" }?.told == .init(intervalMs: 2000, watched: true))
        #expect(couriers.courier(of: "L5") == nil)
    }

    @Test func anAskedIntervalCountsWithinTheWindowAfterItsLastMomentInForce() {
        var asked = AskedIntervals()
        asked.record("T1", intervalMs: 30_000, now: 1000)
        asked.record("T1", intervalMs: 2000, now: 5000)
        #expect(asked.longest("T1", now: 5000) == 30_000)
        #expect(asked.longest("T1", now: 1000 + AskedIntervals.windowMs) == 30_000)
        #expect(asked.longest("T1", now: 1001 + AskedIntervals.windowMs) == 2000)
        #expect(asked.longest("T2", now: 5000) == 0)
        asked.prune(now: 5001 + AskedIntervals.windowMs)
        #expect(asked.tripCount == 0)
    }

    @Test func aHubsWatchedTripsReachTheOthersAndGoWhenItStops() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let client = try RedisClient(redis.address, timeoutMs: 2000)
        let far = Int64(Date().timeIntervalSince1970 * 1000) + 600_000
        for node in ["hub-a", "hub-b"] {  // what the partition leases announce
            _ = try client.command(["ZADD", PartitionLeases.hubsKey, String(far), node].map { Array(redis: $0) })
        }
        let a = ClusterWatchers(seeds: [redis.address], nodeID: "hub-a")
        let b = ClusterWatchers(seeds: [redis.address], nodeID: "hub-b")
        a.start()
        b.start()
        defer { b.stop() }
        func seenByB() -> Set<String> { b.exchange(here: [], version: 0).trips }
        _ = a.exchange(here: ["T1", "T:2"], version: 1)
        try waitUntil("B sees A's trips", timeout: 5) { seenByB() == ["T1", "T:2"] }
        #expect(a.exchange(here: ["T1", "T:2"], version: 1).trips.isEmpty)  // B watches nothing
        _ = a.exchange(here: ["T:2"], version: 2)
        try waitUntil("B sees A's change", timeout: 5) { seenByB() == ["T:2"] }
        let ttl = try client.command(["PTTL", ClusterWatchers.key("hub-a")].map { Array(redis: $0) }).int ?? -2
        #expect(ttl > 0 && ttl <= ClusterWatchers.ttlMs)  // a dead hub's set expires by itself
        a.stop()
        try waitUntil("B forgets a hub that stopped", timeout: 5) { seenByB().isEmpty }
    }

    @Test func aHubsSetIsItsVersionLineThenOneTripALine() {
        let bytes = ClusterWatchers.encode(["T1", "a.b:c"], version: 0x2a)
        #expect(Array(bytes.prefix(ClusterWatchers.headerBytes)) == Array("000000000000002a\n".utf8))
        #expect(ClusterWatchers.decode(bytes) == ["T1", "a.b:c"])
        #expect(ClusterWatchers.decode(ClusterWatchers.encode([], version: 1)).isEmpty)
    }
}
