import Testing
import TrackHubCore
@testable import TrackHubProtocol

struct BodyCase: Sendable, CustomTestStringConvertible {
    let rule: String
    let body: String
    let outcome: Outcome
    var testDescription: String { rule }
    init(_ rule: String, _ body: String, _ outcome: Outcome = .ok) {
        self.rule = rule
        self.body = body
        self.outcome = outcome
    }
}

private let smallLimits = ProtocolLimits(maxRoutePoints: 3, maxWaypoints: 2)

@Suite struct HTTPBodyTests {
    static let createCases: [BodyCase] = [
        BodyCase("create: empty body is all defaults", ""),
        BodyCase("create: empty object is all defaults", "{}"),
        BodyCase("create: body not an object is bad_request", "[]", .error(.badRequest, "JSON object")),
        BodyCase("create: invalid JSON is bad_request", "{", .error(.badRequest, "invalid JSON")),
        BodyCase("create: bad id is bad_request naming id", #"{"id":".."}"#, .error(.badRequest, "id must be")),
        BodyCase("create: route and route_polyline together is bad_request", #"{"route":[[0,0],[1,1]],"route_polyline":"??"}"#, .error(.badRequest, "route and route_polyline")),
        BodyCase("create: route of one point is bad_request", #"{"route":[[0,0]]}"#, .error(.badRequest, "route must have at least 2 points")),
        BodyCase("create: route of zero length is bad_request", #"{"route":[[1,2],[1,2],[1,2]]}"#, .error(.badRequest, "zero length")),
        BodyCase("create: route point out of range is bad_request naming it", #"{"route":[[0,0],[181,0]]}"#, .error(.badRequest, "route[1][0] (lon) must be a number within ±180")),
        BodyCase("create: route point lat out of range", #"{"route":[[0,0],[1,-91]]}"#, .error(.badRequest, "route[1][1] (lat)")),
        BodyCase("create: route point not a pair", #"{"route":[[0,0],{"lat":1,"lon":1}]}"#, .error(.badRequest, "route[1] must be a [lon, lat] pair")),
        BodyCase("create: route not an array", #"{"route":"x"}"#, .error(.badRequest, "route must be an array")),
        BodyCase("create: route over the limit is too_large naming route", #"{"route":[[0,0],[1,1],[2,2],[3,3]]}"#, .error(.tooLarge, "route")),
        BodyCase("create: bad_request beats too_large", #"{"route":[[0,0],[1,1],[2,2],[3,3]],"config":{"max_speed_mps":0}}"#, .error(.badRequest, "config.max_speed_mps")),
        BodyCase("create: waypoints over the limit is too_large naming waypoints", #"{"waypoints":[{"lat":0,"lon":0},{"lat":1,"lon":1},{"lat":2,"lon":2}]}"#, .error(.tooLarge, "waypoints")),
        BodyCase("create: waypoint lon out of range names it", #"{"waypoints":[{"lat":0,"lon":0},{"lat":1,"lon":200}]}"#, .error(.badRequest, "waypoints[1].lon must be a number within ±180")),
        BodyCase("create: waypoint not a point", #"{"waypoints":[[0,0]]}"#, .error(.badRequest, "waypoints[0] must be a point")),
        BodyCase("create: destination lat 91 names destination.lat", #"{"destination":{"lat":91,"lon":0}}"#, .error(.badRequest, "destination.lat")),
        BodyCase("create: rider not an object is bad_request", #"{"rider":"bob"}"#, .error(.badRequest, "rider must be an object")),
        BodyCase("create: rider name not a string is bad_request", #"{"rider":{"id":"r1","name":7}}"#, .error(.badRequest, "rider.name")),
        BodyCase("create: config not an object is bad_request", #"{"config":[]}"#, .error(.badRequest, "config must be an object")),
        BodyCase("create: arrival_buffer_m 0 is bad_request", #"{"config":{"arrival_buffer_m":0}}"#, .error(.badRequest, "config.arrival_buffer_m must be a number from 1 to 1000")),
        BodyCase("create: reroute_distance_m 9 is bad_request", #"{"config":{"reroute_distance_m":9}}"#, .error(.badRequest, "config.reroute_distance_m must be a number from 10 to 10000")),
        BodyCase("create: reroute_distance_m 10001 is bad_request", #"{"config":{"reroute_distance_m":10001}}"#, .error(.badRequest, "config.reroute_distance_m")),
        BodyCase("create: wait_at_waypoints not a boolean is bad_request", #"{"config":{"wait_at_waypoints":"yes"}}"#, .error(.badRequest, "config.wait_at_waypoints must be a boolean")),
        BodyCase("create: max_speed_mps 1001 is bad_request", #"{"config":{"max_speed_mps":1001}}"#, .error(.badRequest, "config.max_speed_mps")),
        BodyCase("create: polyline with a bad character is bad_request", #"{"route_polyline":"abc def"}"#, .error(.badRequest, "route_polyline")),
        BodyCase("create: truncated polyline is bad_request", #"{"route_polyline":"_p~iF~ps|U_"}"#, .error(.badRequest, "route_polyline")),
        BodyCase("create: polyline of one point is bad_request", #"{"route_polyline":"_p~iF~ps|U"}"#, .error(.badRequest, "at least 2 points")),
        BodyCase("create: polyline of zero length is bad_request", #"{"route_polyline":"_p~iF~ps|U????"}"#, .error(.badRequest, "zero length")),
        BodyCase("create: polyline over the limit is too_large", #"{"route_polyline":"_p~iF~ps|U_ulLnnqC_mqNvxq`@??"}"#, .error(.tooLarge, "route")),
        BodyCase("create: polyline not a string is bad_request", #"{"route_polyline":5}"#, .error(.badRequest, "route_polyline must be a string")),
    ]

    @Test(arguments: createCases)
    func createTripValidation(_ testCase: BodyCase) {
        do {
            _ = try CreateTripRequest.decode(bytes(testCase.body), limits: smallLimits)
            if case .error = testCase.outcome { expectError(nil, testCase.outcome, testCase.rule) }
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func createTripDecodesEveryField() throws {
        let body = #"""
            {"id":"trip:42","route":[[-9.14,38.71],[-9.13,38.72,12.5]],"waypoints":[{"lat":38.715,"lon":-9.135}],
             "destination":{"lat":38.72,"lon":-9.13},"rider":{"id":"r1","name":"Ana","extra":[1]},
             "config":{"arrival_buffer_m":25,"wait_at_waypoints":false},"unknown":true}
            """#
        let request = try CreateTripRequest.decode(bytes(body))
        #expect(request.id == "trip:42")
        #expect(request.route == .points([GeoPoint(lat: 38.71, lon: -9.14), GeoPoint(lat: 38.72, lon: -9.13)]))
        #expect(request.waypoints == [GeoPoint(lat: 38.715, lon: -9.135)])
        #expect(request.destination == GeoPoint(lat: 38.72, lon: -9.13))
        #expect(request.rider == ["id": "r1", "name": "Ana", "extra": [1]])
        #expect(request.config == TripConfig(arrivalBufferM: 25, rerouteDistanceM: 100, waitAtWaypoints: false, maxSpeedMps: 70))
        var writer = JSONWriter()
        request.config.write(to: &writer)
        #expect(text(writer.finish()) == #"{"arrival_buffer_m":25,"reroute_distance_m":100,"wait_at_waypoints":false,"max_speed_mps":70,"mode":"car","auto_reroute":false}"#)
    }

    @Test func createTripKeepsThePolylineRaw() throws {
        let request = try CreateTripRequest.decode(bytes(#"{"route_polyline":"_p~iF~ps|U_ulLnnqC_mqNvxq`@","route":null}"#))
        #expect(request.route == .polyline("_p~iF~ps|U_ulLnnqC_mqNvxq`@"))
        #expect(request.route?.pointCount == 3)
        let empty = try CreateTripRequest.decode(bytes("  "))
        #expect(empty == CreateTripRequest())
    }

    static let rerouteCases: [BodyCase] = [
        BodyCase("reroute: route required", "{}", .error(.badRequest, "route or route_polyline is required")),
        BodyCase("reroute: route null counts as absent", #"{"route":null}"#, .error(.badRequest, "route or route_polyline is required")),
        BodyCase("reroute: both routes is bad_request", #"{"route":[[0,0],[1,1]],"route_polyline":"_p~iF~ps|U_ulLnnqC"}"#, .error(.badRequest, "route and route_polyline")),
        BodyCase("reroute: waypoints over the limit is too_large", #"{"route":[[0,0],[1,1]],"waypoints":[{"lat":0,"lon":0},{"lat":1,"lon":1},{"lat":2,"lon":2}]}"#, .error(.tooLarge, "waypoints")),
        BodyCase("reroute: bad destination", #"{"route":[[0,0],[1,1]],"destination":{"lat":0}}"#, .error(.badRequest, "destination.lon is required")),
        BodyCase("reroute: valid", #"{"route":[[0,0],[1,1]],"waypoints":[]}"#),
    ]

    @Test(arguments: rerouteCases)
    func rerouteValidation(_ testCase: BodyCase) {
        do {
            _ = try RerouteRequest.decode(bytes(testCase.body), limits: smallLimits)
            if case .error = testCase.outcome { expectError(nil, testCase.outcome, testCase.rule) }
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func rerouteTellsAbsentWaypointsFromEmptyOnes() throws {
        let keep = try RerouteRequest.decode(bytes(#"{"route":[[0,0],[1,1]]}"#))
        #expect(keep.waypoints == nil)
        let replace = try RerouteRequest.decode(bytes(#"{"route":[[0,0],[1,1]],"waypoints":[]}"#))
        #expect(replace.waypoints == [])
    }

    static let batchCases: [BodyCase] = [
        BodyCase("batch: empty list is fine", #"{"fixes":[]}"#),
        BodyCase("batch: missing fixes is bad_request", "{}", .error(.badRequest, "fixes is required")),
        BodyCase("batch: fixes not an array is bad_request", #"{"fixes":{}}"#, .error(.badRequest, "fixes must be an array")),
        BodyCase("batch: element not an object names it", #"{"fixes":[1]}"#, .error(.badRequest, "fixes[0] must be an object")),
        BodyCase("batch: fraction ts names fixes[i].ts", #"{"fixes":[{"lat":0,"lon":0,"ts":1699999990000},{"lat":0,"lon":0,"ts":1699999990000},{"lat":0,"lon":0,"ts":1699999990000},{"lat":0,"lon":0,"ts":1.5}]}"#, .error(.badRequest, "fixes[3].ts must be an integer")),
        BodyCase("batch: bad lat names fixes[i].lat", #"{"fixes":[{"lat":0,"lon":0,"ts":1699999990000},{"lat":-91,"lon":0,"ts":1699999990000}]}"#, .error(.badRequest, "fixes[1].lat must be a number within ±90")),
        BodyCase("batch: seq negative names fixes[i].seq", #"{"fixes":[{"lat":0,"lon":0,"ts":1699999990000,"seq":-1}]}"#, .error(.badRequest, "fixes[0].seq")),
        BodyCase("batch: trip field inside a fix is ignored", #"{"fixes":[{"trip":"other","lat":0,"lon":0,"ts":1699999990000}]}"#),
    ]

    @Test(arguments: batchCases)
    func fixBatchValidation(_ testCase: BodyCase) {
        do {
            _ = try FixBatchRequest.decode(bytes(testCase.body), now: testNow)
            if case .error = testCase.outcome { expectError(nil, testCase.outcome, testCase.rule) }
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func fixBatchKeepsOrder() throws {
        let body = #"{"fixes":[{"lat":1,"lon":2,"ts":1699999990000,"seq":1},{"lat":3,"lon":4,"ts":1699999991000,"heading":-10}]}"#
        let batch = try FixBatchRequest.decode(bytes(body), now: testNow)
        #expect(batch.fixes == [
            FixInput(lat: 1, lon: 2, ts: 1_699_999_990_000, seq: 1),
            FixInput(lat: 3, lon: 4, ts: 1_699_999_991_000, heading: 350),
        ])
    }
}
