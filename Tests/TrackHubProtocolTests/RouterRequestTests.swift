import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// PROTOCOL 16 on the wire: trips from their stops, `config.mode` / `auto_reroute`,
/// `GET /v1/route`'s query and answer.
@Suite struct RouterRequestTests {
    static func decode(_ json: String) throws(ProtocolError) -> CreateTripRequest {
        try CreateTripRequest.decode(Array(json.utf8))
    }

    static func message(_ json: String) -> String? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func originWaypointsAndDestinationDecode() throws {
        let r = try Self.decode(#"{"origin":{"lat":60.166,"lon":24.94},"waypoints":[{"lat":60.17,"lon":24.945}],"destination":{"lat":60.177,"lon":24.951},"config":{"mode":"bicycle","auto_reroute":false}}"#)
        #expect(r.origin == GeoPoint(lat: 60.166, lon: 24.94))
        #expect(r.route == nil)
        #expect(r.waypoints.count == 1)
        #expect(r.config.mode == .bicycle)
        #expect(r.config.autoReroute == false)
        #expect(try Self.decode("{}").config.autoReroute == nil, "not given: the hub fills it in")
        // Round trip through the client encoder.
        #expect(try CreateTripRequest.decode(ClientRequestBodies.createTrip(r)) == r)
    }

    @Test func badStopsAndModesNameTheirField() {
        #expect(Self.message(#"{"origin":{"lat":60.1,"lon":24.9}}"#)?.contains("destination") == true)
        #expect(Self.message(#"{"origin":{"lat":60.1,"lon":24.9},"destination":{"lat":60.2,"lon":24.9},"route":[[24.9,60.1],[24.9,60.2]]}"#)?.contains("origin") == true)
        #expect(Self.message(#"{"origin":{"lat":91,"lon":24.9},"destination":{"lat":60.2,"lon":24.9}}"#)?.contains("origin") == true)
        #expect(Self.message(#"{"config":{"mode":"plane"}}"#)?.contains("config.mode") == true)
        #expect(Self.message(#"{"config":{"auto_reroute":1}}"#)?.contains("config.auto_reroute") == true)
    }

    @Test func theFoundRouteReplacesOriginInTheLoggedBody() throws {
        let body = Array(#"{"id":"T","origin":{"lat":60.1,"lon":24.9},"destination":{"lat":60.2,"lon":24.9},"rider":{"name":"Ana"}}"#.utf8)
        let path = [GeoPoint(lat: 60.1, lon: 24.9), GeoPoint(lat: 60.15, lon: 24.91), GeoPoint(lat: 60.2, lon: 24.9)]
        let logged = try CreateTripRequest.decode(CreateTripRequest.bodyWithFoundRoute(body, route: path))
        #expect(logged.origin == nil)
        #expect(logged.route == .points(path))
        #expect(logged.id == "T")
        #expect(logged.rider == ["name": "Ana"])
        let reroute = try RerouteRequest.decode(RerouteRequest.body(route: path, destination: path[2]))
        #expect(reroute.route == .points(path))
        #expect(reroute.waypoints == nil, "the unvisited waypoints are kept")
        #expect(reroute.destination == path[2])
    }

    @Test func routeQueryParsesAndNamesItsParameters() throws {
        let q = try RouteSearchQuery.parse("from=60.1,24.9&to=60.2,24.95&via=60.12,24.91;60.15,24.93&mode=foot")
        #expect(q.points == [GeoPoint(lat: 60.1, lon: 24.9), GeoPoint(lat: 60.12, lon: 24.91), GeoPoint(lat: 60.15, lon: 24.93), GeoPoint(lat: 60.2, lon: 24.95)])
        #expect(q.mode == .foot)
        // libwebsockets splits at ';' too: the second stop comes as a parameter of its own.
        let split = try RouteSearchQuery.parse(QueryString(items: [("from", "60.1,24.9"), ("via", "60.12,24.91"), ("60.15,24.93", ""), ("to", "60.2,24.95")]))
        #expect(split.via.count == 2)
        for (query, field) in [("to=60.2,24.95", "from"), ("from=60.1,24.9", "to"), ("from=60.1,24.9&to=1,2&via=1,2;x", "via[1]"),
                               ("from=60.1&to=60.2,24.95", "from"), ("from=60.1,24.9&to=60.2,24.95&mode=boat", "mode")] {
            do {
                _ = try RouteSearchQuery.parse(query)
                Issue.record("\(query) parsed")
            } catch {
                #expect(error.code == .badRequest)
                #expect(error.message.hasPrefix(field), "\(query): \(error.message)")
            }
        }
    }

    @Test func theFoundRouteAnswerAndTheReroutedReason() {
        let body = HTTPBodies.foundRoute(path: [GeoPoint(lat: 60.1, lon: 24.9), GeoPoint(lat: 60.2, lon: 24.9)], distanceM: 11_119.51, durationS: 600.04)
        #expect(String(decoding: body, as: UTF8.self) == #"{"route":[[24.9,60.1],[24.9,60.2]],"distance_m":11119.5,"duration_s":600}"#)
        let event = ServerMessages.event(trip: "T", TripEvent(n: 3, kind: .rerouted(reason: .offRoute), t: 5, position: nil))
        #expect(String(decoding: event, as: UTF8.self).hasSuffix(#""lat":null,"lon":null,"reason":"off_route"}"#))
    }
}
