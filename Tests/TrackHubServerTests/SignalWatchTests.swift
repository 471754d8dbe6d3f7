import Foundation
import Testing
import TrackHubLWS
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL 18 on a hub alone with a manual clock: a silent trip gets `signal_lost` once, at
/// its threshold (within the watch's own granularity), and the watch looks only at the trips
/// that came due, never at every trip.
@Suite struct SignalWatchTests {
    /// A fix `eastM` metres along 38.7 N, taken and sent at the hub's current time.
    static func fix(_ hub: SocketlessHub, _ trip: String, eastM: Double) throws {
        let body: [String: Any] = ["fixes": [["lat": 38.7, "lon": -9.15 + eastM / 86_800, "ts": hub.clock.now]]]
        let (status, json) = try hub.http(.post, "/v1/trips/\(trip)/fixes", json: body)
        #expect(status == 200, "\(json)")
    }

    static func state(_ hub: SocketlessHub, _ trip: String) -> (stale: Bool, lastFixT: Int64?, lastEvent: Int) {
        hub.host.onServiceThreadAndWait { [hub] _ in
            let t = hub.hub.services.trips[trip]?.trip
            return (t?.isStale ?? false, t?.lastFixT, t?.lastEventNumber ?? 0)
        }
    }

    @Test func aSilentTripGetsSignalLostOnceAtItsThreshold() throws {
        let hub = try SocketlessHub { $0.staleAfterMs = 1000 }
        defer { hub.stop() }
        #expect(try hub.http(.post, "/v1/trips", json: ["id": "T1"]).status == 201)
        let viewer = try #require(hub.host.openAndWait())
        hub.host.send(viewer, #"{"op":"subscribe","trip":"T1","id":1}"#)
        try hub.waitForMessage(viewer, "the snapshot") { $0["type"] as? String == "snapshot" }
        for i in 0..<3 {
            if i > 0 { hub.run(forMs: 1000) }
            try Self.fix(hub, "T1", eastM: Double(i) * 20)
        }
        let lastFix = try #require(Self.state(hub, "T1").lastFixT)
        // Usual interval 1 s: stale after 3 s (more than --stale-after).
        hub.run(forMs: 2900)
        #expect(Self.state(hub, "T1").stale == false)
        // The watch looks in quarter-second buckets at each housekeeping (every 500 ms).
        hub.run(forMs: 100 + 750 + 100)
        #expect(Self.state(hub, "T1").stale)
        let lost = try hub.waitForMessage(viewer, "signal_lost") { $0["name"] as? String == "signal_lost" }
        let t = try #require(lost["t"] as? Int64)
        let silence: Int64 = t - lastFix
        #expect(silence >= 3000)
        #expect(silence <= 3850)
        #expect(lost["last_fix_t"] as? Int64 == lastFix)
        // Stored with the trip, numbered after the trip's other events.
        #expect(lost["n"] as? Int == Self.state(hub, "T1").lastEvent)
        hub.run(forMs: 60_000, stepMs: 250)
        hub.host.send(viewer, #"{"op":"ping","id":2}"#)
        try hub.waitForMessage(viewer, "a pong") { $0["type"] as? String == "pong" }  // what was sent before it is in
        #expect(hub.messages(viewer).filter { $0["name"] as? String == "signal_lost" }.count == 1)
    }

    @Test func onlyTripsThatCameDueAreLookedAt() throws {
        let hub = try SocketlessHub { $0.staleAfterMs = 15_000 }
        defer { hub.stop() }
        let count = 200
        for i in 0..<count {
            #expect(try hub.http(.post, "/v1/trips", json: ["id": "T\(i)"]).status == 201)
            try Self.fix(hub, "T\(i)", eastM: 0)
        }
        let watched = hub.host.onServiceThreadAndWait { [hub] _ in hub.hub.services.signals.watchedCount }
        #expect(watched == count)
        func looked() -> Int { hub.host.onServiceThreadAndWait { [hub] _ in hub.hub.services.signals.tripsLookedAt } }
        // One fix each: a usual interval of 10 s, stale after 30 s; none is due before that.
        hub.run(forMs: 29_000, stepMs: 250)
        #expect(looked() == 0)
        hub.run(forMs: 2000, stepMs: 250)
        #expect(looked() == count)
        #expect((0..<count).allSatisfy { Self.state(hub, "T\($0)").stale })
        // Reported: nothing more to watch until their next fix.
        hub.run(forMs: 60_000, stepMs: 500)
        #expect(looked() == count)
        let stillWatched = hub.host.onServiceThreadAndWait { [hub] _ in hub.hub.services.signals.watchedCount }
        #expect(stillWatched == 0)
    }
}
