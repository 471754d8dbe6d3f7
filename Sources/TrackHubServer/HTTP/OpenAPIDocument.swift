import TrackHubCore
import TrackHubProtocol

/// `GET /v1/openapi.json` (PROTOCOL 14): an OpenAPI 3.1 document generated from the route
/// table (`APIRoute.Kind`), so that it lists exactly the routes the hub dispatches.
enum OpenAPIDocument {
    static let errorDescriptions: [Int: String] = [
        400: "bad_request: the message names the field",
        401: "unauthorized: no valid Bearer token (a secured hub)",
        403: "forbidden: the token's scope or trips do not allow it",
        404: "not_found: the trip does not exist",
        405: "the path does not take this method (Allow lists those it takes)",
        409: "conflict: the trip's state does not allow it",
        413: "too_large: a body or list over its limit",
        503: "unavailable: the store cannot commit",
    ]

    /// The document's bytes.
    static func json(server: String) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 32 * 1024)
        w.value(document(server: server))
        return w.finish()
    }

    static func document(server: String) -> JSONValue {
        var paths: [(String, JSONValue)] = []
        for template in templates {
            let kinds = APIRoute.Kind.allCases.filter { $0.template == template }
            var operations: [(String, JSONValue)] = []
            if kinds.contains(where: \.hasTripID) {
                let isDevice = kinds.contains(where: \.isDeviceRoute)
                operations.append(("parameters", [[
                    "name": "id", "in": "path", "required": true, "description": isDevice ? "the device id" : "the trip id",
                    "schema": OpenAPISchemas.ref("TripID"),
                ]]))
            }
            for kind in kinds { operations.append((kind.method.rawValue.lowercased(), operation(kind))) }
            operations.append(("options", preflight(kinds)))
            paths.append((template, .object(JSONObject(operations))))
        }
        return .object(JSONObject([
            ("openapi", "3.1.0"),
            ("info", [
                "title": "TrackHub HTTP API",
                "version": "1",
                "description": "PROTOCOL version 1, sections 5 and 14. Errors are {\"error\": {code, message}}. Live updates are on the WebSocket /v1/ws (not described here).",
            ]),
            ("servers", [["url": "/", "description": .string(server)]]),
            ("paths", .object(JSONObject(paths))),
            ("components", [
                "schemas": OpenAPISchemas.all,
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT (HS256)"]],
            ]),
        ]))
    }

    /// Each path once, in table order.
    static var templates: [String] {
        var seen: [String] = []
        for kind in APIRoute.Kind.allCases where !seen.contains(kind.template) { seen.append(kind.template) }
        return seen
    }

    static func operation(_ kind: APIRoute.Kind) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("operationId", .string(kind.rawValue)),
            ("summary", .string(kind.summary)),
            ("description", .string(kind.scopeNote)),
            ("security", kind.access == .anyone ? [] : [["bearer": []]]),
        ]
        if !kind.queries.isEmpty {
            members.append(("parameters", .array(kind.queries.map { query in
                ["name": .string(query.name), "in": "query", "required": .bool(query.required),
                 "description": .string(query.description), "schema": query.schema]
            })))
        }
        if let body = kind.requestBody {
            var bodyMembers: [(String, JSONValue)] = [("required", .bool(body.required))]
            if let description = body.description { bodyMembers.append(("description", .string(description))) }
            bodyMembers.append(("content", .object(JSONObject(body.content.map { ($0.type, ["schema": OpenAPISchemas.ref($0.schema)]) }))))
            members.append(("requestBody", .object(JSONObject(bodyMembers))))
        }
        var responses: [(String, JSONValue)] = []
        let success = kind.success
        var content: [(String, JSONValue)] = []
        for (type, schema) in success.content {
            content.append((type, ["schema": schema.map(OpenAPISchemas.ref) ?? (type == "application/json" ? ["type": "object"] : ["type": "string"])]))
        }
        var successMembers: [(String, JSONValue)] = [("description", "success"), ("content", .object(JSONObject(content)))]
        if success.status == 201 {
            successMembers.append(("headers", ["Location": ["description": "/v1/trips/{id} of the new trip", "schema": OpenAPISchemas.string]]))
        }
        responses.append((String(success.status), .object(JSONObject(successMembers))))
        for status in kind.errors {
            responses.append((String(status), errorResponse(status)))
        }
        members.append(("responses", .object(JSONObject(responses))))
        return .object(JSONObject(members))
    }

    static func errorResponse(_ status: Int) -> JSONValue {
        [
            "description": .string(errorDescriptions[status] ?? "error"),
            "content": ["application/json": ["schema": OpenAPISchemas.ref("Error")]],
        ]
    }

    /// `OPTIONS` on the path: the CORS preflight, no token.
    static func preflight(_ kinds: [APIRoute.Kind]) -> JSONValue {
        let methods = kinds.map(\.method)
        return [
            "operationId": .string("preflight_" + (kinds.first?.rawValue ?? "")),
            "summary": "CORS preflight: the methods of this path; no token needed",
            "security": [],
            "responses": [
                "204": [
                    "description": "no body",
                    "headers": [
                        "Access-Control-Allow-Methods": ["schema": ["type": "string", "const": .string(methods.map(\.rawValue).joined(separator: ", "))]],
                        "Access-Control-Allow-Headers": ["schema": ["type": "string", "const": "Authorization, Content-Type"]],
                        "Access-Control-Max-Age": ["schema": ["type": "string", "const": "600"]],
                    ],
                ],
            ],
        ]
    }
}
