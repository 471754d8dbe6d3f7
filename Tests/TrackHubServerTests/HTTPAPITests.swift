import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Every route of the HTTP API (PROTOCOL section 5), with its answers and errors.
@Suite struct HTTPAPITests {
    // MARK: POST /v1/trips

    @Test func createAnswers201WithTheTripAndNoType() throws {
        try withTestHub { hub, _ in
            let (status, trip) = try hub.httpJSON("POST", "/v1/trips", json: [
                "id": "created", "route": Lisbon.route(), "rider": ["id": "c1", "name": "Rui"],
                "waypoints": [Lisbon.point(alongM: 800)], "config": ["arrival_buffer_m": 25],
            ])
            #expect(status == 201)
            #expect(trip["type"] == nil && trip["re"] == nil && trip["recovered"] == nil)
            #expect(trip["trip"] as? String == "created")
            #expect(trip["status"] as? String == "pending")
            #expect((trip["route"] as? [[Double]])?.count == 21)
            let config = try #require(trip["config"] as? [String: Any])
            #expect(config.double("arrival_buffer_m") == 25)
            #expect(config.double("reroute_distance_m") == 100, "defaults filled in")
            let waypoints = try #require(trip["waypoints"] as? [[String: Any]])
            #expect(waypoints.count == 1)
            #expect(waypoints.first?.int("index") == 0)
            #expect(waypoints.first?["visited"] as? Bool == false)
            #expect((trip["trail"] as? [Any])?.isEmpty == true)
            #expect(trip.int("last_event") == 1)
            #expect((trip["rider"] as? [String: Any])?["id"] as? String == "c1")
        }
    }

    @Test func createWithAnExistingIDIs409() throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("taken")
            let (status, json) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "taken", "route": Lisbon.route()])
            #expect(status == 409)
            let error = TestHub.errorOf(json)
            #expect(error.code == "conflict")
            #expect(error.message.contains("taken"))
        }
    }

    static let routeJSON = "[[-9.14,38.70],[-9.14,38.71],[-9.14,38.72]]"

    @Test(arguments: [
        (#"{"route": \#(routeJSON), "route_polyline": "_p~iF~ps|U_ulLnnqC"}"#, "route"),
        (#"{"route": [[-9.14, 38.70]]}"#, "route"),
        (#"{"route": [[-9.14, 38.70], [-9.14, 38.70]]}"#, "route"),
        (#"{"route": [[-9.14, 38.70], [-9.14, 91.0]]}"#, "route"),
        (#"{"route_polyline": 42}"#, "route_polyline"),
        (#"{"route": \#(routeJSON), "config": {"arrival_buffer_m": 0}}"#, "arrival_buffer_m"),
        (#"{"route": \#(routeJSON), "config": {"max_speed_mps": 5000}}"#, "max_speed_mps"),
        (#"{"route": \#(routeJSON), "config": {"wait_at_waypoints": "yes"}}"#, "wait_at_waypoints"),
        (#"{"route": \#(routeJSON), "waypoints": [{"lat": 38.71, "lon": -9.10}]}"#, "waypoints"),
        (#"{"route": \#(routeJSON), "destination": {"lat": 38.71}}"#, "destination"),
        (#"{"id": "../etc", "route": \#(routeJSON)}"#, "id"),
        (#"{"route": \#(routeJSON), "#, "body"),
    ])
    func createWithABadFieldIs400NamingIt(body: String, field: String) throws {
        try withTestHub { hub, _ in
            let (status, json) = try hub.httpText("POST", "/v1/trips", body)
            #expect(status == 400)
            let error = TestHub.errorOf(json)
            #expect(error.code == "bad_request")
            if field != "body" { #expect(error.message.contains(field), "\(error.message) should name \(field)") }
            #expect((try hub.httpJSON("GET", "/v1/trips").json["trips"] as? [Any])?.isEmpty == true, "nothing created")
        }
    }

    @Test func createAcceptsAnEncodedPolyline() throws {
        try withTestHub { hub, _ in
            let points = Lisbon.route(points: 5)
            let trip = try hub.createTrip(["id": "poly", "route_polyline": encodePolyline(points)])
            let route = try #require(trip["route"] as? [[Double]])
            #expect(route.count == 5)
            for (given, got) in zip(points, route) {
                #expect(abs(given[0] - got[0]) < 1e-5 && abs(given[1] - got[1]) < 1e-5)
            }
            let destination = try #require(trip["destination"] as? [String: Any])
            #expect(abs(destination.double("lat")! - Lisbon.northLat) < 1e-5)
        }
    }

    @Test func createWithoutAnIDMakesOne() throws {
        try withTestHub { hub, _ in
            let trip = try hub.createTrip(["route": Lisbon.route()])
            let id = try #require(trip["trip"] as? String)
            #expect(!id.isEmpty && id.count <= 64)
            #expect(id.allSatisfy { $0.isLetter || $0.isNumber || ".:_-".contains($0) })
            #expect(try hub.httpJSON("GET", "/v1/trips/\(id)").status == 200)
            let other = try hub.createTrip(["route": Lisbon.route()])
            #expect(other["trip"] as? String != id)
        }
    }

    @Test func createWithoutARouteTracksFreely() throws {
        try withTestHub { hub, _ in
            let trip = try hub.createTrip(["id": "free"])
            #expect(trip["route"] is NSNull)
            #expect(trip["destination"] is NSNull)
            var courier = Courier(trip: "free")
            let (status, acks) = try hub.httpJSON("POST", "/v1/trips/free/fixes", json: ["fixes": [courier.fix(alongM: 0, trip: false)]])
            #expect(status == 200)
            #expect((acks["acks"] as? [[String: Any]])?.first?["applied"] as? Bool == true)
            let (_, after) = try hub.httpJSON("GET", "/v1/trips/free")
            #expect(after["status"] as? String == "moving")
            #expect(after["progress"] is NSNull && after["done_m"] is NSNull && after["eta_s"] is NSNull)
            #expect(after["position"] is [String: Any])
        }
    }

    // MARK: GET /v1/trips

    @Test func listIsOrderedBytewiseWithoutRouteOrTrail() throws {
        try withTestHub { hub, _ in
            for id in ["b", "a-1", "Z", "a", "B", "_x", "9"] { try hub.createLisbonTrip(id) }
            let (status, json) = try hub.httpJSON("GET", "/v1/trips")
            #expect(status == 200)
            let trips = try #require(json["trips"] as? [[String: Any]])
            #expect(trips.compactMap { $0["trip"] as? String } == ["9", "B", "Z", "_x", "a", "a-1", "b"])
            #expect(trips.allSatisfy { $0["route"] == nil && $0["trail"] == nil && $0["type"] == nil })
            #expect(trips.allSatisfy { $0["status"] as? String == "pending" })
            #expect(json["next"] is NSNull)
        }
    }

    @Test func listPagesWithLimitAndAfter() throws {
        try withTestHub { hub, _ in
            for id in ["p1", "p2", "p3", "p4", "p5"] { try hub.createLisbonTrip(id) }
            var seen: [String] = []
            var after: String?
            var pages = 0
            repeat {
                let (status, json) = try hub.httpJSON("GET", "/v1/trips?limit=2" + (after.map { "&after=\($0)" } ?? ""))
                #expect(status == 200)
                let ids = (json["trips"] as? [[String: Any]] ?? []).compactMap { $0["trip"] as? String }
                #expect(ids.count <= 2)
                seen += ids
                after = json["next"] as? String
                if let after { #expect(after == ids.last, "next is the last id listed") }
                pages += 1
            } while after != nil && pages < 10
            #expect(seen == ["p1", "p2", "p3", "p4", "p5"])
            #expect(pages == 3)
            let (_, fromMiddle) = try hub.httpJSON("GET", "/v1/trips?after=p2x")
            #expect((fromMiddle["trips"] as? [[String: Any]])?.compactMap { $0["trip"] as? String } == ["p3", "p4", "p5"])
            for bad in ["limit=0", "limit=1001", "limit=two"] {
                let (status, json) = try hub.httpJSON("GET", "/v1/trips?\(bad)")
                #expect(status == 400)
                #expect(TestHub.errorOf(json).message.contains("limit"))
            }
        }
    }

    @Test func listFiltersByACommaSeparatedStatusList() throws {
        try withTestHub { hub, _ in
            for id in ["s-pending", "s-moving", "s-ended"] { try hub.createLisbonTrip(id) }
            var courier = Courier(trip: "s-moving")
            #expect(try hub.httpJSON("POST", "/v1/trips/s-moving/fixes", json: ["fixes": [courier.fix(alongM: 10, trip: false)]]).status == 200)
            #expect(try hub.httpJSON("DELETE", "/v1/trips/s-ended").status == 200)
            func ids(_ query: String) throws -> [String] {
                let (status, json) = try hub.httpJSON("GET", "/v1/trips?\(query)")
                #expect(status == 200)
                return (json["trips"] as? [[String: Any]] ?? []).compactMap { $0["trip"] as? String }
            }
            #expect(try ids("status=moving") == ["s-moving"])
            #expect(try ids("status=pending,ended") == ["s-ended", "s-pending"])
            #expect(try ids("status=arrived").isEmpty)
            let (status, json) = try hub.httpJSON("GET", "/v1/trips?status=flying")
            #expect(status == 400)
            #expect(TestHub.errorOf(json).message.contains("status"))
        }
    }

    // MARK: GET /v1/trips/{id}

    @Test func getAnswersTheTripWithItsTrail() throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("one")
            var courier = Courier(trip: "one")
            let fixes = [courier.fix(alongM: 10, trip: false), courier.fix(alongM: 60, trip: false)]
            #expect(try hub.httpJSON("POST", "/v1/trips/one/fixes", json: ["fixes": fixes]).status == 200)
            let (status, trip) = try hub.httpJSON("GET", "/v1/trips/one")
            #expect(status == 200)
            #expect(trip["trip"] as? String == "one")
            #expect(trip["type"] == nil)
            let trail = try #require(trip["trail"] as? [[Double]])
            #expect(trail.count == 2)
            #expect(trail.last.map { Int64($0[2]) } == fixes[1]["ts"] as? Int64)
            #expect(abs(trail[1][1] - Lisbon.lat(alongM: 60)) < 1e-6)
        }
    }

    // MARK: PUT /v1/trips/{id}/route

    @Test func rerouteSendsReroutedThenANewSnapshotToSubscribers() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("detoured")
            let viewer = try clients.connect()
            try viewer.subscribe("detoured", id: 1)
            var courier = Courier(trip: "detoured")
            try viewer.sendFix(courier.fix(alongM: 300), id: 2)
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 300))
            // A new street: north to 38.71, then east.
            let newRoute: [[Double]] = [[Lisbon.lon, 38.70], [Lisbon.lon, 38.71], [-9.13, 38.71]]
            let (status, trip) = try hub.httpJSON("PUT", "/v1/trips/detoured/route", json: ["route": newRoute])
            #expect(status == 200)
            #expect((trip["route"] as? [[Double]])?.count == 3)
            let destination = try #require(trip["destination"] as? [String: Any])
            #expect(abs(destination.double("lon")! - -9.13) < 1e-6, "the new route's last point")
            let stream = try viewer.collect("the new snapshot") { $0.type == "snapshot" }
            let events = stream.filter { $0.type == "event" }
            #expect(events.map(\.name) == ["rerouted"])
            let snapshot = try #require(stream.last)
            #expect((snapshot["route"] as? [[Double]])?.count == 3)
            #expect(snapshot.int("last_event") == events.first?.int("n"))
            #expect(snapshot["status"] as? String == "moving", "no off_route/back_on_route on a reroute")
        }
    }

    @Test func rerouteIs409OnceTheTripHasEnded() throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("done")
            #expect(try hub.httpJSON("DELETE", "/v1/trips/done").status == 200)
            let (status, json) = try hub.httpJSON("PUT", "/v1/trips/done/route", json: ["route": Lisbon.route(points: 3)])
            #expect(status == 409)
            #expect(TestHub.errorOf(json).code == "conflict")
            let (badStatus, bad) = try hub.httpJSON("PUT", "/v1/trips/done/route", json: ["route": [[Lisbon.lon, 38.70]]])
            #expect(badStatus == 400, "a bad body is bad_request before conflict")
            #expect(TestHub.errorOf(bad).message.contains("route"))
        }
    }

    @Test func rerouteIs409OnceTheTripHasArrived() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createTrip(["id": "there", "route": TripSemanticsTests.shortRoute])
            let viewer = try clients.connect()
            try viewer.subscribe("there", id: 1)
            var courier = Courier(trip: "there")
            try viewer.sendFix(courier.fix(alongM: 300), id: 2)
            try viewer.sendFix(courier.fix(alongM: TripSemanticsTests.shortLengthM, durationMs: 300), id: 3)
            try viewer.next(type: "event") { $0.name == "arrived" }
            let (status, json) = try hub.httpJSON("PUT", "/v1/trips/there/route", json: ["route": Lisbon.route()])
            #expect(status == 409)
            #expect(TestHub.errorOf(json).message.contains("arrived"))
        }
    }

    // MARK: POST /v1/trips/{id}/fixes

    @Test func fixBatchIsAckedInOrderAndResentFixesAreDuplicates() throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("batch")
            var courier = Courier(trip: "batch")
            let fixes = [100.0, 150, 200, 250].map { courier.fix(alongM: $0, trip: false) }
            let (status, json) = try hub.httpJSON("POST", "/v1/trips/batch/fixes", json: ["fixes": fixes])
            #expect(status == 200)
            let acks = try #require(json["acks"] as? [[String: Any]])
            #expect(acks.map { $0.int("seq") } == [1, 2, 3, 4])
            #expect(acks.allSatisfy { $0["applied"] as? Bool == true && $0["trip"] as? String == "batch" })
            let (_, again) = try hub.httpJSON("POST", "/v1/trips/batch/fixes", json: ["fixes": [fixes[2], courier.fix(alongM: 300, trip: false)]])
            let second = try #require(again["acks"] as? [[String: Any]])
            #expect(second.first?["reason"] as? String == "duplicate")
            #expect(second.first?["applied"] as? Bool == false)
            #expect(second.last?["applied"] as? Bool == true)
            let (emptyStatus, empty) = try hub.httpJSON("POST", "/v1/trips/batch/fixes", json: ["fixes": [] as [Any]])
            #expect(emptyStatus == 200)
            #expect((empty["acks"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: [("lat", #""north""#), ("ts", "1.5"), ("seq", "-1"), ("lon", "181"), ("accuracy_m", "-3"), ("lat", "null")])
    func aBadFixInABatchIs400NamingItAndNothingIsStored(field: String, value: String) throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("bad-batch")
            var courier = Courier(trip: "bad-batch")
            var fixes = [100.0, 150, 200].map { courier.fix(alongM: $0, trip: false) }
            fixes[1][field] = "__BAD__"
            let text = String(decoding: try JSONSerialization.data(withJSONObject: ["fixes": fixes]), as: UTF8.self)
                .replacingOccurrences(of: #""__BAD__""#, with: value)
            let (status, json) = try hub.httpText("POST", "/v1/trips/bad-batch/fixes", text)
            #expect(status == 400)
            let error = TestHub.errorOf(json)
            #expect(error.code == "bad_request")
            #expect(error.message.contains("fixes[1].\(field)"), "\(error.message)")
            let (_, trail) = try hub.httpJSON("GET", "/v1/trips/bad-batch/trail")
            #expect(((trail["properties"] as? [String: Any])?["ts"] as? [Any])?.isEmpty == true, "nothing stored")
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/bad-batch")
            #expect(trip["status"] as? String == "pending")
        }
    }

    // MARK: POST /v1/trips/{id}/proceed

    @Test func proceedIs409UnlessHoldingAndReleasesAHold() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("wait-here", ["waypoints": [Lisbon.point(alongM: 300)]])
            let (status, json) = try hub.httpJSON("POST", "/v1/trips/wait-here/proceed")
            #expect(status == 409)
            #expect(TestHub.errorOf(json).code == "conflict")
            #expect(TestHub.errorOf(json).message.contains("pending"))
            let viewer = try clients.connect()
            try viewer.subscribe("wait-here", id: 1)
            var courier = Courier(trip: "wait-here")
            try viewer.sendFix(courier.fix(alongM: 100), id: 2)
            try viewer.sendFix(courier.fix(alongM: 320, durationMs: 300), id: 3)
            try viewer.next(type: "event") { $0.name == "waypoint_reached" }
            let (released, trip) = try hub.httpJSON("POST", "/v1/trips/wait-here/proceed")
            #expect(released == 200, "\(trip)")
            #expect(trip["status"] as? String == "moving")
            #expect(trip.int("leg") == 1)
            try viewer.next(type: "event") { $0.name == "waypoint_resumed" }
            #expect(try hub.httpJSON("POST", "/v1/trips/wait-here/proceed").status == 409)
        }
    }

    /// Regression: lws reported the completion of an empty body after the request had been
    /// dispatched already, so a bodiless POST ran twice (a `proceed` released the hold, then
    /// answered 409 "moving" to the same request).
    @Test func aPostWithoutABodyIsCarriedOutOnce() throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("once")
            #expect(try hub.http("POST", "/v1/trips/once/proceed").status == 409)
            let (_, body) = try hub.http("GET", "/metrics")
            let text = String(decoding: body, as: UTF8.self)
            #expect(text.contains(#"trackhub_errors_out_total{code="conflict"} 1"#), "one request, one answer")
            #expect(text.contains("\ntrackhub_http_requests_total 3\n"), "create, proceed, metrics")
        }
    }

    // MARK: DELETE /v1/trips/{id}

    @Test func deleteEndsTheTripOnceWithOneEndedEvent() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("bye")
            let viewer = try clients.connect()
            try viewer.subscribe("bye", id: 1)
            var courier = Courier(trip: "bye")
            try viewer.sendFix(courier.fix(alongM: 100), id: 2)
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 100))
            let (status, trip) = try hub.httpJSON("DELETE", "/v1/trips/bye")
            #expect(status == 200)
            #expect(trip["status"] as? String == "ended")
            let ended = try viewer.next(type: "event") { $0.name == "ended" }
            #expect(abs(ended.double("lat")! - Lisbon.lat(alongM: 100)) < 1e-6, "where the marker stopped")
            let (againStatus, again) = try hub.httpJSON("DELETE", "/v1/trips/bye")
            #expect(againStatus == 200)
            #expect(again["status"] as? String == "ended")
            #expect(again.int("last_event") == ended.int("n"), "no second event")
            #expect(try viewer.request(["op": "ping"], id: 3).type == "pong")
            #expect(viewer.drain().filter { $0.type == "event" }.isEmpty)
            let late = try viewer.sendFix(courier.fix(alongM: 150), id: 4)
            #expect(late["reason"] as? String == "ended")
        }
    }

    // MARK: GET /v1/trips/{id}/trail

    @Test func trailIsAGeoJSONFeatureWithTimesAndReasonsFilteredByFromAndTo() throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("tracked")
            let (_, empty) = try hub.httpJSON("GET", "/v1/trips/tracked/trail")
            #expect(empty["type"] as? String == "Feature")
            #expect(empty["geometry"] is NSNull, "fewer than two fixes")
            var courier = Courier(trip: "tracked")
            var fixes = [100.0, 150, 200].map { courier.fix(alongM: $0, trip: false) }
            var outlier = courier.fix(alongM: 2000, trip: false)
            outlier["ts"] = (fixes[2]["ts"] as! Int64) + 1000
            fixes.append(outlier)
            fixes.append(courier.fix(alongM: 260, trip: false))
            #expect(try hub.httpJSON("POST", "/v1/trips/tracked/fixes", json: ["fixes": fixes]).status == 200)
            let (status, trail) = try hub.httpJSON("GET", "/v1/trips/tracked/trail")
            #expect(status == 200)
            #expect(trail["type"] as? String == "Feature")
            let geometry = try #require(trail["geometry"] as? [String: Any])
            #expect(geometry["type"] as? String == "LineString")
            let coordinates = try #require(geometry["coordinates"] as? [[Double]])
            #expect(coordinates.count == 5)
            #expect(abs(coordinates[0][0] - Lisbon.lon) < 1e-6 && abs(coordinates[0][1] - Lisbon.lat(alongM: 100)) < 1e-6, "[lon, lat]")
            let properties = try #require(trail["properties"] as? [String: Any])
            let times = try #require(properties["ts"] as? [Int64])
            #expect(times == fixes.map { $0["ts"] as! Int64 }, "ordered by ts")
            let reasons = try #require(properties["reason"] as? [Any])
            #expect(reasons.count == 5)
            #expect(reasons[0] is NSNull && reasons[4] is NSNull)
            #expect(reasons[3] as? String == "outlier")

            let (_, window) = try hub.httpJSON("GET", "/v1/trips/tracked/trail?from=\(times[1])&to=\(times[3])")
            let windowTimes = (window["properties"] as? [String: Any])?["ts"] as? [Int64]
            #expect(windowTimes == Array(times[1...3]), "from and to are inclusive")
            let (_, single) = try hub.httpJSON("GET", "/v1/trips/tracked/trail?from=\(times[4])")
            #expect(single["geometry"] is NSNull)
            let (badStatus, bad) = try hub.httpJSON("GET", "/v1/trips/tracked/trail?from=yesterday")
            #expect(badStatus == 400)
            #expect(TestHub.errorOf(bad).message.contains("from"))
        }
    }

    // MARK: 404

    @Test(arguments: [
        ("GET", "/v1/trips/ghost", ""),
        ("PUT", "/v1/trips/ghost/route", #"{"route": \#(routeJSON)}"#),
        ("POST", "/v1/trips/ghost/fixes", #"{"fixes": []}"#),
        ("POST", "/v1/trips/ghost/proceed", ""),
        ("DELETE", "/v1/trips/ghost", ""),
        ("GET", "/v1/trips/ghost/trail", ""),
    ])
    func everyTripRouteIs404ForAnUnknownTrip(method: String, path: String, body: String) throws {
        try withTestHub { hub, _ in
            try hub.createLisbonTrip("real")
            let (status, json) = try hub.httpText(method, path, body)
            #expect(status == 404)
            let error = TestHub.errorOf(json)
            #expect(error.code == "not_found")
            #expect(error.message.contains("ghost"))
        }
    }
}

/// Google encoded polyline, precision 5, from `[lon, lat]` pairs.
func encodePolyline(_ points: [[Double]]) -> String {
    var out = ""
    var previous = (lat: 0, lon: 0)
    func encode(_ value: Int) {
        var v = value < 0 ? ~(value << 1) : value << 1
        while v >= 0x20 {
            out.unicodeScalars.append(Unicode.Scalar(UInt8((0x20 | (v & 0x1F)) + 63)))
            v >>= 5
        }
        out.unicodeScalars.append(Unicode.Scalar(UInt8(v + 63)))
    }
    for point in points {
        let lat = Int((point[1] * 1e5).rounded()), lon = Int((point[0] * 1e5).rounded())
        encode(lat - previous.lat)
        encode(lon - previous.lon)
        previous = (lat, lon)
    }
    return out
}
