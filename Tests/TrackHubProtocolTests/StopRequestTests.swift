import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// PROTOCOL 17: waypoint objects with `id`, `name`, `dwell_s` in the create and reroute
/// bodies, and `subscribe`'s `stop`.
@Suite struct StopRequestTests {
    static let route = #""route":[[-9.15,38.7],[-9.14,38.7]]"#

    static func create(_ waypoints: String) throws(ProtocolError) -> CreateTripRequest {
        try CreateTripRequest.decode(Array(#"{\#(route),"waypoints":\#(waypoints)}"#.utf8))
    }

    @Test func stopDetailsAreReadInOrder() throws {
        let r = try Self.create(#"[{"lat":38.7,"lon":-9.148,"id":"a","name":"Ann","dwell_s":60},{"lat":38.7,"lon":-9.146}]"#)
        #expect(r.stops == [StopDetails(id: "a", name: "Ann", dwellS: 60), StopDetails()])
        #expect(try Self.create(#"[{"lat":38.7,"lon":-9.148}]"#).stops.isEmpty)
        let put = try RerouteRequest.decode(Array(#"{\#(Self.route),"waypoints":[{"lat":38.7,"lon":-9.148,"id":"b"}]}"#.utf8))
        #expect(put.stops == [StopDetails(id: "b")])
    }

    @Test(arguments: [
        (#"[{"lat":38.7,"lon":-9.148,"id":"x"},{"lat":38.7,"lon":-9.146,"id":"x"}]"#, "waypoints[1].id"),
        (#"[{"lat":38.7,"lon":-9.148,"id":"a b"}]"#, "waypoints[0].id"),
        (#"[{"lat":38.7,"lon":-9.148,"id":""}]"#, "waypoints[0].id"),
        (#"[{"lat":38.7,"lon":-9.148,"id":7}]"#, "waypoints[0].id"),
        (#"[{"lat":38.7,"lon":-9.148,"name":5}]"#, "waypoints[0].name"),
        (#"[{"lat":38.7,"lon":-9.148,"dwell_s":3601}]"#, "waypoints[0].dwell_s"),
        (#"[{"lat":38.7,"lon":-9.148,"dwell_s":-1}]"#, "waypoints[0].dwell_s"),
        (#"[{"lat":38.7,"lon":-9.148,"dwell_s":2.5}]"#, "waypoints[0].dwell_s"),
    ])
    func badStopsAreBadRequestNamingTheField(waypoints: String, field: String) {
        do {
            _ = try Self.create(waypoints)
            Issue.record("accepted \(waypoints)")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.contains(field), "\(error.message)")
        }
    }

    @Test func namesAreCountedInCharacters() throws {
        let ok = String(repeating: "é", count: 200)
        #expect(try Self.create(#"[{"lat":38.7,"lon":-9.148,"name":"\#(ok)"}]"#).stops.first?.name == ok)
        #expect(throws: ProtocolError.self) { try Self.create(#"[{"lat":38.7,"lon":-9.148,"name":"\#(ok)e"}]"#) }
    }

    @Test func theBodyEncoderWritesTheStopsBack() throws {
        let request = try Self.create(#"[{"lat":38.7,"lon":-9.148,"id":"a","name":"Ann","dwell_s":60},{"lat":38.7,"lon":-9.146}]"#)
        #expect(try CreateTripRequest.decode(ClientRequestBodies.createTrip(request)).stops == request.stops)
    }

    @Test func subscribeTakesAStop() {
        let m = ClientMessage.decode(Array(#"{"op":"subscribe","trip":"T1","stop":"destination"}"#.utf8), now: 0).result
        #expect(m == .success(.subscribe(trip: "T1", mode: .frames, sinceEvent: nil, stop: .destination)))
        let w = ClientMessage.decode(Array(#"{"op":"subscribe","trip":"T1","stop":"a"}"#.utf8), now: 0).result
        #expect(w == .success(.subscribe(trip: "T1", mode: .frames, sinceEvent: nil, stop: .waypoint(id: "a"))))
        let bad = ClientMessage.decode(Array(#"{"op":"subscribe","trip":"T1","stop":"a b"}"#.utf8), now: 0).result
        guard case .failure(let error) = bad else { Issue.record("accepted stop \"a b\""); return }
        #expect(error.code == .badRequest && error.message.contains("stop"))
    }
}
