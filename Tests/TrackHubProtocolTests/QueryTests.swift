import Testing
import TrackHubCore
@testable import TrackHubProtocol

struct QueryCase: Sendable, CustomTestStringConvertible {
    let rule: String
    let query: String
    let outcome: Outcome
    var testDescription: String { rule }
    init(_ rule: String, _ query: String, _ outcome: Outcome = .ok) {
        self.rule = rule
        self.query = query
        self.outcome = outcome
    }
}

@Suite struct QueryTests {
    @Test func percentDecoding() throws {
        let query = try QueryString.parse("?a=x%20y+z&b=%E2%82%AC&c&a=last&=v")
        #expect(query["a"] == "last")
        #expect(query["b"] == "€")
        #expect(query["c"] == "")
        #expect(query["missing"] == nil)
        #expect(query.items.count == 5)
        #expect(throws: ProtocolError.self) { try QueryString.parse("a=%zz") }
        #expect(throws: ProtocolError.self) { try QueryString.parse("a=%C3") }
        #expect(throws: ProtocolError.self) { try QueryString.parse("a=%") }
    }

    static let listCases: [QueryCase] = [
        QueryCase("trips: no query", ""),
        QueryCase("trips: empty values count as absent", "?status=&limit=&after="),
        QueryCase("trips: unknown status is bad_request", "status=moving,flying", .error(.badRequest, "status must be")),
        QueryCase("trips: limit 0 is bad_request", "limit=0", .error(.badRequest, "limit must be an integer from 1 to 1000")),
        QueryCase("trips: limit 1001 is bad_request", "limit=1001", .error(.badRequest, "limit")),
        QueryCase("trips: limit 1.5 is bad_request", "limit=1.5", .error(.badRequest, "limit")),
        QueryCase("trips: limit not a number is bad_request", "limit=ten", .error(.badRequest, "limit")),
        QueryCase("trips: after with a space is bad_request", "after=a%20b", .error(.badRequest, "after must be")),
        QueryCase("trips: bad percent-escape is bad_request", "after=%G1", .error(.badRequest, "after")),
    ]

    @Test(arguments: listCases)
    func tripListValidation(_ testCase: QueryCase) {
        do {
            _ = try TripListQuery.parse(testCase.query)
            if case .error = testCase.outcome { expectError(nil, testCase.outcome, testCase.rule) }
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func tripListValues() throws {
        #expect(try TripListQuery.parse("") == TripListQuery(statuses: nil, limit: 100, after: nil))
        let query = try TripListQuery.parse("?status=moving%2Coff_route,moving&limit=1000&after=T%3A1")
        #expect(query == TripListQuery(statuses: [.moving, .offRoute], limit: 1000, after: "T:1"))
    }

    static let trailCases: [QueryCase] = [
        QueryCase("trail: no bounds", ""),
        QueryCase("trail: both bounds", "from=1699999990000&to=1700000000000"),
        QueryCase("trail: from not an integer is bad_request", "from=abc", .error(.badRequest, "from must be an integer")),
        QueryCase("trail: to fraction is bad_request", "to=1.5", .error(.badRequest, "to must be an integer")),
        QueryCase("trail: huge to is bad_request", "to=1e400", .error(.badRequest, "to must be an integer")),
    ]

    @Test(arguments: trailCases)
    func trailValidation(_ testCase: QueryCase) {
        do {
            _ = try TrailQuery.parse(testCase.query)
            if case .error = testCase.outcome { expectError(nil, testCase.outcome, testCase.rule) }
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func trailValues() throws {
        #expect(try TrailQuery.parse("from=5&to=-3") == TrailQuery(from: 5, to: -3))
        #expect(try TrailQuery.parse("to=7") == TrailQuery(from: nil, to: 7))
    }

    static let clusterCases: [QueryCase] = [
        QueryCase("clusters: zoom required", "bbox=0,0,1,1", .error(.badRequest, "zoom is required")),
        QueryCase("clusters: zoom 23 is bad_request", "zoom=23", .error(.badRequest, "zoom must be a number from 0 to 22")),
        QueryCase("clusters: zoom not a number is bad_request", "zoom=abc", .error(.badRequest, "zoom")),
        QueryCase("clusters: zoom inf is bad_request", "zoom=inf", .error(.badRequest, "zoom")),
        QueryCase("clusters: bbox of 3 numbers is bad_request", "zoom=1&bbox=0,0,1", .error(.badRequest, "bbox must be 4")),
        QueryCase("clusters: bbox with nan is bad_request", "zoom=1&bbox=0,0,nan,1", .error(.badRequest, "bbox")),
        QueryCase("clusters: bbox south > north is bad_request", "zoom=1&bbox=0,5,1,4", .error(.badRequest, "south")),
    ]

    @Test(arguments: clusterCases)
    func clustersValidation(_ testCase: QueryCase) {
        do {
            _ = try ClustersQuery.parse(testCase.query)
            if case .error = testCase.outcome { expectError(nil, testCase.outcome, testCase.rule) }
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func clustersValues() throws {
        #expect(try ClustersQuery.parse("zoom=3").viewport == .world(zoom: 3))
        let wrapped = try ClustersQuery.parse("bbox=190%2C0%2C200%2C10&zoom=22.7").viewport
        #expect(wrapped == Viewport(west: -170, south: 0, east: -160, north: 10, zoom: 22))
        let crossing = try ClustersQuery.parse("bbox=170,-10,-170,10&zoom=4").viewport
        #expect(crossing.crossesAntimeridian)
        #expect(crossing.contains(lat: 0, lon: 179))
        #expect(crossing.contains(lat: 0, lon: -175))
        #expect(!crossing.contains(lat: 0, lon: 0))
        #expect(try ClustersQuery.parse("bbox=-180,-90,180,90&zoom=0").viewport.isWorld)
    }
}
