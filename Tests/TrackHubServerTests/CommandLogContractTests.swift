import Foundation
import Testing
import TrackHubTesting
@testable import TrackHubServer

/// The same trip commands against both command logs: a hub alone (`LocalCommandLog`, the
/// memory store) and a cluster node (`RedisCommandLog`, a real `redis-server` on loopback).
/// What a client sees must not depend on which log made its command durable.
@Suite struct CommandLogContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case local, redis
        var testDescription: String { rawValue }
    }

    /// A hub on the backend, and what to stop after (nil: skipped, Redis not installed).
    final class Rig {
        let hub: TestHub
        let redis: RedisProcess?
        init?(_ backend: Backend) throws {
            switch backend {
            case .local:
                redis = nil
                hub = try TestHub()
            case .redis:
                guard let redis = try RedisProcess.start() else { return nil }
                self.redis = redis
                hub = try TestHub {
                    $0.clusterSeeds = [redis.address]
                    $0.clusterPartitions = 4
                }
            }
        }
        func stop() {
            hub.stop()
            redis?.stop()
        }
    }

    @Test(arguments: Backend.allCases) func createConflictsAndUnknownTrips(_ backend: Backend) throws {
        guard let rig = try Rig(backend) else { return }
        defer { rig.stop() }
        let hub = rig.hub
        let (created, body) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "c1", "route": Lisbon.route()])
        #expect(created == 201)
        #expect(body["trip"] as? String == "c1")
        #expect(body["status"] as? String == "pending")
        let (again, conflict) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "c1", "route": Lisbon.route()])
        #expect(again == 409)
        #expect(TestHub.errorOf(conflict).code == "conflict")
        #expect(try hub.httpJSON("GET", "/v1/trips/c1").status == 200)
        #expect(try hub.httpJSON("POST", "/v1/trips/nobody/proceed").status == 404)
        #expect(try hub.httpJSON("DELETE", "/v1/trips/nobody").status == 404)
        let clients = try TestClients()
        defer { clients.stop() }
        let courier = try clients.connect(port: hub.port)
        let missing = try courier.request(["op": "fix", "trip": "nobody", "lat": 38.7, "lon": -9.14, "ts": nowMillis()], id: 1)
        #expect(missing.type == "error")
        #expect(missing["code"] as? String == "not_found")
    }

    @Test(arguments: Backend.allCases) func fixesAreAckedOnceAndShown(_ backend: Backend) throws {
        guard let rig = try Rig(backend) else { return }
        defer { rig.stop() }
        let hub = rig.hub
        try hub.createLisbonTrip("f1")
        let clients = try TestClients()
        defer { clients.stop() }
        let viewer = try clients.connect(port: hub.port)
        try viewer.subscribe("f1", id: 1, ["mode": "segments"])
        let connection = try clients.connect(port: hub.port)
        var courier = Courier(trip: "f1")
        let first = courier.fix(alongM: 100)
        let ack = try connection.sendFix(first, id: 2)
        #expect(ack["applied"] as? Bool == true)
        let resent = try connection.sendFix(first, id: 3)
        #expect(resent["applied"] as? Bool == false)
        #expect(resent["reason"] as? String == "duplicate")
        let segment = try viewer.next(type: "segment")
        #expect(segment["trip"] as? String == "f1")
        // An HTTP batch: one ack per fix, in order.
        let batch = [courier.fix(alongM: 200, trip: false), courier.fix(alongM: 300, trip: false)]
        let (status, acks) = try hub.httpJSON("POST", "/v1/trips/f1/fixes", json: ["fixes": batch])
        #expect(status == 200)
        #expect((acks["acks"] as? [[String: Any]])?.map { $0["applied"] as? Bool } == [true, true])
        // Every acked fix is in the trail, the duplicate once.
        let (trailStatus, trail) = try hub.httpJSON("GET", "/v1/trips/f1/trail")
        #expect(trailStatus == 200)
        let times = (trail["properties"] as? [String: Any])?["ts"] as? [Any]
        #expect(times?.count == 3)
    }

    @Test(arguments: Backend.allCases) func proceedRouteAndEnd(_ backend: Backend) throws {
        guard let rig = try Rig(backend) else { return }
        defer { rig.stop() }
        let hub = rig.hub
        try hub.createLisbonTrip("p1")
        let (proceedStatus, notHolding) = try hub.httpJSON("POST", "/v1/trips/p1/proceed")
        #expect(proceedStatus == 409)
        #expect(TestHub.errorOf(notHolding).code == "conflict")
        let (routeStatus, rerouted) = try hub.httpJSON("PUT", "/v1/trips/p1/route", json: ["route": Lisbon.route(points: 5)])
        #expect(routeStatus == 200)
        #expect((rerouted["route"] as? [Any])?.count == 5)
        let (endStatus, ended) = try hub.httpJSON("DELETE", "/v1/trips/p1")
        #expect(endStatus == 200)
        #expect(ended["status"] as? String == "ended")
        #expect(try hub.httpJSON("DELETE", "/v1/trips/p1").status == 200, "ending an ended trip changes nothing")
        let (lateStatus, _) = try hub.httpJSON("PUT", "/v1/trips/p1/route", json: ["route": Lisbon.route(points: 5)])
        #expect(lateStatus == 409)
        let clients = try TestClients()
        defer { clients.stop() }
        let connection = try clients.connect(port: hub.port)
        var courier = Courier(trip: "p1")
        let late = try connection.sendFix(courier.fix(alongM: 100), id: 1)
        #expect(late["applied"] as? Bool == false)
        #expect(late["reason"] as? String == "ended")
    }

    /// PROTOCOL 11 on both logs: a device change is answered once durable; a fix from a
    /// device lands in its trip's trail and moves its `last_seen`; a forgotten device's fixes
    /// are refused as an unknown device's.
    @Test(arguments: Backend.allCases) func devicesAreRegisteredFixedAndForgotten(_ backend: Backend) throws {
        guard let rig = try Rig(backend) else { return }
        defer { rig.stop() }
        let hub = rig.hub
        let phone = "phone-contract-0123456789"
        try hub.createLisbonTrip("d1")
        let (putStatus, put) = try hub.httpJSON("PUT", "/v1/devices/\(phone)", json: ["trip": "d1", "name": "Ana"])
        #expect(putStatus == 200)
        #expect(put["trip"] as? String == "d1")
        #expect(put["name"] as? String == "Ana")
        #expect(put["last_seen"] is NSNull)
        let (missingTrip, noTrip) = try hub.httpJSON("PUT", "/v1/devices/\(phone)", json: ["trip": "nowhere"])
        #expect(missingTrip == 404)
        #expect(TestHub.errorOf(noTrip).message.contains("trip"))

        let ts = nowMillis() - 5000
        #expect(try hub.http("GET", "/v1/osmand?id=\(phone)&lat=38.7&lon=-9.14&timestamp=\(ts)&altitude=12&batt=80").status == 200)
        let trail = try hub.httpJSON("GET", "/v1/trips/d1/trail").json
        let properties = trail["properties"] as? [String: Any]
        #expect(properties?["ts"] as? [Int64] == [ts])
        #expect(properties?["altitude"] as? [Double] == [12])
        let seen = try hub.httpJSON("GET", "/v1/devices/\(phone)").json
        #expect(seen["last_seen"] as? Int64 != nil)
        #expect((seen["last_position"] as? [String: Any])?["lat"] as? Double == 38.7)

        // Bound to no trip: the fix only moves `last_seen` and `last_position`.
        let loose = "loose-contract-0123456789"
        #expect(try hub.httpJSON("PUT", "/v1/devices/\(loose)", json: ["trip": NSNull()]).status == 200)
        #expect(try hub.http("POST", "/v1/owntracks/\(loose)", json: ["_type": "location", "lat": 38.71, "lon": -9.15, "tst": ts / 1000]).status == 200)
        let looseSeen = try hub.httpJSON("GET", "/v1/devices/\(loose)").json
        #expect((looseSeen["last_position"] as? [String: Any])?["lat"] as? Double == 38.71)
        let list = try hub.httpJSON("GET", "/v1/devices").json["devices"] as? [[String: Any]]
        #expect(list?.map { $0["device"] as? String } == [loose, phone])

        let (deleteStatus, deleted) = try hub.httpJSON("DELETE", "/v1/devices/\(phone)")
        #expect(deleteStatus == 200)
        #expect(deleted["device"] as? String == phone)
        #expect(try hub.httpJSON("DELETE", "/v1/devices/\(phone)").status == 404)
        #expect(try hub.httpJSON("GET", "/v1/devices/\(phone)").status == 404)
        #expect(try hub.http("GET", "/v1/osmand?id=\(phone)&lat=38.7&lon=-9.14&timestamp=\(ts + 1000)").status == 404)
        let after = try hub.httpJSON("GET", "/v1/trips/d1/trail").json["properties"] as? [String: Any]
        #expect(after?["ts"] as? [Int64] == [ts], "a forgotten device's fix is not stored")
    }
}
