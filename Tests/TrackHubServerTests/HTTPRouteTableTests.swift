import Foundation
import Testing
import TrackHubLWS
import TrackHubProtocol
@testable import TrackHubServer

/// The one route table (PROTOCOL 5, 14): matching, and the OpenAPI document it generates.
@Suite struct HTTPRouteTableTests {
    @Test func everyTemplateMatchesItsOwnRoute() {
        for kind in APIRoute.Kind.allCases {
            let path = kind.template.replacingOccurrences(of: "{id}", with: "T-1.a:b_c")
            #expect(APIRoute.match(method: kind.method, path: path) == .route(kind.route(id: "T-1.a:b_c")), "\(kind)")
        }
    }

    @Test func missesAreNotFoundMethodNotAllowedOrBadID() {
        #expect(APIRoute.match(method: .get, path: "/v1/nothing") == .notFound)
        #expect(APIRoute.match(method: .get, path: "/v1/trips/T1/elsewhere") == .notFound)
        #expect(APIRoute.match(method: .patch, path: "/v1/trips") == .methodNotAllowed(allowed: [.get, .post]))
        #expect(APIRoute.match(method: .post, path: "/v1/trips/T1") == .methodNotAllowed(allowed: [.get, .delete]))
        #expect(APIRoute.match(method: .get, path: "/v1/trips/T1/fixes") == .methodNotAllowed(allowed: [.post]))
        #expect(APIRoute.match(method: .options, path: "/v1/trips/T1/route") == .preflight(allowed: [.put]))
        #expect(APIRoute.match(method: .get, path: "/v1/trips/a b") == .badTripID("a b"))
        #expect(APIRoute.match(method: .get, path: "/v1/trips/..") == .badTripID(".."))
        #expect(APIRoute.allowHeader([.get, .delete]) == "GET, DELETE, OPTIONS")
    }

    /// The document lists exactly the table's routes, each with its method, and nothing else.
    @Test func openAPIDocumentHasEveryRouteOfTheTableAndNoOther() throws {
        let data = Data(OpenAPIDocument.json(server: "test"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let verbs: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        var documented: Set<String> = []
        for (path, item) in paths {
            for key in item.keys where verbs.contains(key) && key != "options" { documented.insert("\(key.uppercased()) \(path)") }
            #expect(item["options"] != nil, "\(path) has no preflight")
        }
        let table = Set(APIRoute.Kind.allCases.map { "\($0.method.rawValue) \($0.template)" })
        #expect(documented == table, "only in the document: \(documented.subtracting(table)); only in the table: \(table.subtracting(documented))")
        // Every $ref points at a schema that exists.
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let text = String(decoding: data, as: UTF8.self)
        let refs = text.components(separatedBy: "#/components/schemas/").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(!refs.isEmpty)
        for ref in refs { #expect(schemas[String(ref)] != nil, "missing schema \(ref)") }
    }

    /// The POST and PUT routes that read no body (PROTOCOL 5: `proceed` takes none). The
    /// test below checks that each really ignores what is sent.
    static let bodiless: Set<APIRoute.Kind> = [.proceed]

    /// PROTOCOL 14: the document gives every route's body. A POST or PUT without a
    /// `requestBody` fails here unless it is listed bodiless, and both are checked against
    /// what the parser reads: a documented body is one whose garbage `APICall.parse`
    /// refuses, a bodiless route's parse ignores it.
    @Test func everyPostAndPutDocumentsTheBodyItReads() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json(server: "test"))) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let limits = APICall.Limits(protocolLimits: .default, maxRoutePoints: 10_000)
        var checked = 0
        for kind in APIRoute.Kind.allCases where kind.method == .post || kind.method == .put {
            let operation = try #require(paths[kind.template]?[kind.method.rawValue.lowercased()] as? [String: Any], "\(kind)")
            let request = HTTPRequest(
                connection: ConnectionID(raw: 1), method: kind.method, path: kind.template, query: [(name: "id", value: "dev-1"), (name: "lat", value: "60.1"), (name: "lon", value: "24.9")],
                origin: nil, host: nil, authorization: nil, peerAddress: "127.0.0.1", body: Array("{not json".utf8))
            let readsBody: Bool
            do {
                _ = try APICall.parse(kind.route(id: "dev-1"), request, limits: limits, now: 1_800_000_000_000)
                readsBody = false
            } catch {
                readsBody = true
            }
            if Self.bodiless.contains(kind) {
                #expect(!readsBody, "\(kind) is listed bodiless but refuses a garbage body")
                #expect(operation["requestBody"] == nil, "\(kind) documents a body it does not read")
            } else {
                #expect(readsBody, "\(kind) documents a body it does not read")
                let body = try #require(operation["requestBody"] as? [String: Any], "\(kind.method.rawValue) \(kind.template) has no requestBody")
                let content = try #require(body["content"] as? [String: Any], "\(kind)")
                #expect(!content.isEmpty, "\(kind)")
                for (type, media) in content {
                    #expect(type.contains("/"), "\(kind): \(type)")
                    #expect(((media as? [String: Any])?["schema"] as? [String: Any])?["$ref"] != nil, "\(kind) \(type) has no schema")
                }
            }
            checked += 1
        }
        #expect(checked >= 8, "the table's POST and PUT routes")
        // The phone doors' bodies in the media types the phones send (PROTOCOL 11).
        let owntracks = try #require((paths["/v1/owntracks/{id}"]?["post"] as? [String: Any])?["requestBody"] as? [String: Any])
        #expect((owntracks["content"] as? [String: Any]).map { Set($0.keys) } == ["application/json"])
        let osmand = try #require((paths["/v1/osmand"]?["post"] as? [String: Any])?["requestBody"] as? [String: Any])
        #expect((osmand["content"] as? [String: Any]).map { Set($0.keys) } == ["application/x-www-form-urlencoded", "application/json"])
        #expect(osmand["required"] as? Bool == false, "OsmAnd's fields may all be in the query string")
    }

    @Test func trailExportTextIsValid() {
        #expect(TrailExport.iso8601(millis: 0) == "1970-01-01T00:00:00.000Z")
        #expect(TrailExport.iso8601(millis: 1_767_225_600_123) == "2026-01-01T00:00:00.123Z")
        #expect(TrailExport.iso8601(millis: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(TrailExport.fixed7(0.00001) == "0.00001")
        #expect(TrailExport.fixed7(-9.142) == "-9.142")
        #expect(TrailExport.fixed7(38) == "38")
        #expect(TrailExport.fixed7(-0.00000001) == "0")
        #expect(TrailExport.csvRow(.init(ts: 5, lat: 1.5, lon: -2, reason: "duplicate")) == "5,1.5,-2,duplicate,,\r\n")
        #expect(throws: ProtocolError.self) { try TrailFormat.parse(QueryString.parse("format=kml")) }
        #expect((try? TrailFormat.parse(QueryString.parse("format=gpx"))) == .gpx)
    }
}
