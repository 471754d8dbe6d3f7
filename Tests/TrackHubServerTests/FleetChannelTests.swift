import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL section 8 through the hub: viewports, shared answers, HTTP.
@Suite struct FleetChannelTests {
    /// Riders placed on a grid around Lisbon, each by its first fix.
    private func placeRiders(_ hub: TestHub, count: Int) throws -> [(id: String, lat: Double, lon: Double)] {
        var riders: [(String, Double, Double)] = []
        for index in 0..<count {
            let lat = 38.70 + Double(index / 20) * 0.01
            let lon = -9.20 + Double(index % 20) * 0.01
            let id = "rider-\(index)"
            try hub.createTrip(["id": id, "route": [[lon, lat], [lon, lat + 0.01]]])
            let (status, _) = try hub.httpJSON("POST", "/v1/trips/\(id)/fixes", json: ["fixes": [["lat": lat, "lon": lon, "ts": nowMillis(), "seq": 1]]])
            #expect(status == 200)
            riders.append((id, lat, lon))
        }
        return riders
    }

    private func counts(_ message: [String: Any]) -> Int {
        (message["items"] as? [[String: Any]] ?? []).reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
    }

    @Test func manyViewersOfFewViewportsGetCorrectClustersAndTheWorkGrowsWithDistinctViewports() throws {
        try withTestHub(configure: { $0.fleetHz = 10 }) { hub, clients in
            let riders = try placeRiders(hub, count: 100)
            // 50 distinct viewports: 10 zooms × 5 boxes (one of them the whole world).
            let boxes: [[Double]] = [[-180, -85, 180, 85], [-9.25, 38.65, -9.0, 38.80], [-9.21, 38.69, -9.1, 38.72], [-9.30, 38.60, -9.15, 38.75], [100, 10, 110, 20]]
            var viewers: [(TestConnection, [Double], Int)] = []
            for index in 0..<1000 {
                let box = boxes[index % 5]
                let zoom = 3 + (index / 5) % 10
                viewers.append((try clients.connect(), box, zoom))
            }
            for (index, (connection, box, zoom)) in viewers.enumerated() {
                try connection.send(["op": "viewport", "bbox": box, "zoom": zoom, "id": index])
            }
            var firstReplies: [[String: Any]] = []
            for (index, (connection, _, _)) in viewers.enumerated() {
                let first = try connection.next(type: "clusters", re: index, timeout: 20)
                #expect(first["zoom"] is Int)
                firstReplies.append(first)
            }
            // Each viewer's latest answer counts the whole placed fleet: the first reply already,
            // or an update once the next fleet tick has seen every rider.
            for (index, (connection, box, zoom)) in viewers.enumerated() {
                let inside = riders.filter { $0.lat >= box[1] && $0.lat <= box[3] && $0.lon >= box[0] && $0.lon <= box[2] }.count
                let latest = (firstReplies[index]["total"] as? Int) == riders.count
                    ? firstReplies[index]
                    : try connection.next(type: "clusters", timeout: 20) { ($0["total"] as? Int) == riders.count }
                let sum = counts(latest)
                #expect(latest["zoom"] as? Int == zoom)
                if box == boxes[0] {
                    #expect(sum == riders.count, "world bbox at zoom \(zoom) adds up to \(sum)")
                } else {
                    #expect(sum >= inside, "every rider inside \(box) is counted: \(sum) < \(inside)")
                }
            }
            let metrics = String(decoding: try hub.http("GET", "/metrics").body, as: UTF8.self)
            let ticks = try #require(metricValue(metrics, "trackhub_fleet_ticks_total"))
            let computed = try #require(metricValue(metrics, "trackhub_fleet_viewports_computed_total"))
            #expect(ticks >= 1)
            #expect(computed <= ticks * 50, "viewport answers are computed once per distinct viewport per tick: \(computed) over \(ticks) ticks")
            // Both are counted as a tick's answers are queued (service thread), so they agree.
            let observed = try #require(metricValue(metrics, "trackhub_fleet_tick_seconds_count"))
            #expect(observed == ticks, "each fleet tick observed once: \(observed) of \(ticks)")
        }
    }

    @Test func clustersOverHTTPCountTheWholeFleetForTheWorld() throws {
        try withTestHub(configure: { $0.fleetHz = 10 }) { hub, clients in
            let riders = try placeRiders(hub, count: 30)
            let viewer = try clients.connect()
            try viewer.send(["op": "viewport", "bbox": [-180, -90, 180, 90], "zoom": 2, "id": 1])
            let first = try viewer.next(type: "clusters", re: 1)
            if (first["total"] as? Int) != riders.count {
                _ = try viewer.next(type: "clusters", timeout: 20) { ($0["total"] as? Int) == riders.count }
            }
            let (status, body) = try hub.httpJSON("GET", "/v1/fleet/clusters?zoom=2")
            #expect(status == 200)
            #expect(body["total"] as? Int == riders.count)
            #expect(counts(body) == riders.count)
            #expect(body["type"] == nil)
            let (badStatus, _) = try hub.httpJSON("GET", "/v1/fleet/clusters?bbox=1,2,3")
            #expect(badStatus == 400)
        }
    }

    @Test func viewportNullStopsUpdatesWithoutAReply() throws {
        try withTestHub(configure: { $0.fleetHz = 10 }) { hub, clients in
            let viewer = try clients.connect()
            try viewer.send(["op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10, "id": 1])
            _ = try viewer.next(type: "clusters", re: 1)
            try viewer.send(["op": "viewport", "bbox": NSNull(), "zoom": 10, "id": 2])
            _ = try placeRiders(hub, count: 3)
            // A ping after the null viewport: its pong comes, and no clusters with re 2 ever does.
            let pong = try viewer.request(["op": "ping"], id: 3)
            #expect(pong["type"] as? String == "pong")
            #expect(!viewer.drain().contains { ($0["re"] as? Int) == 2 })
        }
    }
}

/// The value of an unlabelled metric in Prometheus text.
func metricValue(_ text: String, _ name: String) -> Int? {
    for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
        return Int(Double(line.split(separator: " ")[1]) ?? -1)
    }
    return nil
}
