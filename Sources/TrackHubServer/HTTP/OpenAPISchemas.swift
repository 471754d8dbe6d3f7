import TrackHubCore
import TrackHubProtocol

/// The JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of the `/v1` bodies: PROTOCOL 4 and 5.
/// Open objects (unknown fields allowed), as clients must ignore unknown fields.
enum OpenAPISchemas {
    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
    static func nullable(_ type: String) -> JSONValue { ["type": [.string(type), "null"]] }
    static func nullable(_ schema: JSONValue) -> JSONValue { ["oneOf": [schema, ["type": "null"]]] }
    static func array(_ items: JSONValue, min: Int64? = nil, max: Int64? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", "array"), ("items", items)]
        if let min { members.append(("minItems", .number(JSONNumber(min)))) }
        if let max { members.append(("maxItems", .number(JSONNumber(max)))) }
        return .object(JSONObject(members))
    }
    static func object(_ properties: [(String, JSONValue)], required: [String]) -> JSONValue {
        ["type": "object", "required": .array(required.map { .string($0) }), "properties": .object(JSONObject(properties))]
    }
    static func strings(_ values: [String]) -> JSONValue { ["type": "string", "enum": .array(values.map { .string($0) })] }

    static let number: JSONValue = ["type": "number"]
    static let integer: JSONValue = ["type": "integer"]
    static let string: JSONValue = ["type": "string"]
    static let boolean: JSONValue = ["type": "boolean"]
    static let lonLat = array(number, min: 2, max: 2)
    static let bbox = array(number, min: 4, max: 4)

    static var all: JSONValue {
        .object(JSONObject([
            ("TripID", ["type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"]),
            ("Point", object([("lat", ["type": "number", "minimum": -90, "maximum": 90]), ("lon", ["type": "number", "minimum": -180, "maximum": 180])], required: ["lat", "lon"])),
            ("Line", ["description": "GeoJSON order: [lon, lat] pairs", "type": "array", "items": lonLat]),
            ("Config", config),
            ("Trip", trip),
            ("TripList", object([("trips", array(ref("Trip"))), ("next", nullable("string"))], required: ["trips", "next"])),
            ("Trail", trail),
            ("Clusters", clusters),
            ("Ack", object([("trip", string), ("seq", integer), ("applied", boolean), ("reason", strings(refusals))], required: ["trip", "applied"])),
            ("Acks", object([("acks", array(ref("Ack")))], required: ["acks"])),
            ("Error", error),
            ("CreateTrip", createTrip),
            ("Reroute", reroute),
            ("Fix", fix),
            ("FixBatch", object([("fixes", array(ref("Fix"), max: 10_000))], required: ["fixes"])),
            ("Device", object([
                ("device", ref("TripID")), ("trip", nullable("string")), ("name", nullable("string")),
                ("last_seen", nullable("integer")), ("last_position", nullable(ref("Point"))),
            ], required: ["device", "trip", "name", "last_seen", "last_position"])),
            ("DeviceList", object([("devices", array(ref("Device")))], required: ["devices"])),
            ("DevicePut", object([("trip", nullable("string")), ("name", string)], required: ["trip"])),
            ("ShareCreate", object([("ttl_s", ["type": "integer", "minimum": 1, "maximum": 2_592_000, "default": 86_400])], required: [])),
            ("Share", object([
                ("token", string), ("jti", string), ("url", ["type": "string", "description": "/t/<token>, the customer's page"]),
                ("expires_at", ["type": "integer", "description": "ms since the epoch"]),
            ], required: ["token", "jti", "url", "expires_at"])),
            ("FoundRoute", object([
                ("route", ref("Line")), ("distance_m", number),
                ("duration_s", ["type": "number", "description": "the router's travel time, seconds"]),
            ], required: ["route", "distance_m", "duration_s"])),
            ("ShareRevoked", object([("jti", string), ("revoked", boolean)], required: ["jti", "revoked"])),
            ("OsmAndForm", osmAndForm),
            ("OsmAndJSON", osmAndJSON),
            ("OwnTracksMessage", ownTracksMessage),
            ("OwnTracksAnswer", ["description": "messages for the phone, which OwnTracks reads as a list: none, or one cmd setConfiguration setting its reporting interval (PROTOCOL 18's cadence)", "type": "array",
                                 "items": ["type": "object", "required": ["_type"], "properties": ["_type": string]]]),
        ]))
    }

    /// A number where a negative value means unknown (a phone's speed, heading, accuracy).
    static func phoneNumber(_ description: String) -> JSONValue { ["type": "number", "description": .string(description)] }

    /// OsmAnd's fields (PROTOCOL 11) as a form; each may come in the query string instead,
    /// so none is required of the body alone.
    static var osmAndForm: JSONValue {
        ["type": "object", "description": "id (or deviceid) and lat and lon (or location) are required, here or in the query string", "properties": [
            "id": ["description": "the device id", "$ref": "#/components/schemas/TripID"],
            "deviceid": ["description": "the device id, when id is not given", "$ref": "#/components/schemas/TripID"],
            "lat": ["type": "number", "minimum": -90, "maximum": 90],
            "lon": ["type": "number", "minimum": -180, "maximum": 180],
            "location": ["type": "string", "description": "LAT,LON instead of lat and lon"],
            "timestamp": ["type": ["integer", "string"], "description": "Unix seconds (milliseconds above 10^12), ISO 8601 with an offset, or YYYY-MM-DD HH:MM:SS (UTC); missing: the hub's clock"],
            "speed": phoneNumber("knots; negative: unknown"),
            "bearing": phoneNumber("degrees; negative: unknown"),
            "heading": phoneNumber("degrees, when bearing is not given"),
            "altitude": phoneNumber("metres"),
            "accuracy": phoneNumber("metres; negative: unknown"),
            "batt": ["type": "number", "maximum": 100, "description": "battery percent; negative: unknown"],
        ]]
    }

    /// Traccar Client 9's JSON body (PROTOCOL 11); other fields (`extras`, `activity`, ...) ignored.
    static var osmAndJSON: JSONValue {
        object([
            ("device_id", ref("TripID")),
            ("location", object([
                ("timestamp", ["type": ["string", "number"], "description": "ISO 8601 with an offset (or Unix seconds or ms); missing: the hub's clock"]),
                ("coords", object([
                    ("latitude", ["type": "number", "minimum": -90, "maximum": 90]),
                    ("longitude", ["type": "number", "minimum": -180, "maximum": 180]),
                    ("accuracy", phoneNumber("metres; negative: unknown")),
                    ("speed", phoneNumber("m/s; negative: unknown")),
                    ("heading", phoneNumber("degrees; negative: unknown")),
                    ("altitude", phoneNumber("metres")),
                ], required: ["latitude", "longitude"])),
                ("battery", object([("level", ["type": "number", "maximum": 1, "description": "0–1; negative: unknown"])], required: [])),
            ], required: ["coords"])),
        ], required: ["device_id", "location"])
    }

    /// An OwnTracks message in HTTP mode (PROTOCOL 11): a `location` is a fix; another
    /// `_type` (`transition`, `waypoint`, `lwt`, ...) is answered and ignored.
    static var ownTracksMessage: JSONValue {
        [
            "type": "object",
            "required": ["_type"],
            "properties": [
                "_type": ["type": "string", "description": "location is a fix; any other type is ignored"],
                "lat": ["type": "number", "minimum": -90, "maximum": 90],
                "lon": ["type": "number", "minimum": -180, "maximum": 180],
                "tst": ["type": "number", "minimum": 0, "description": "Unix seconds; missing: the hub's clock"],
                "acc": phoneNumber("metres; negative: unknown"),
                "vel": phoneNumber("km/h; negative: unknown"),
                "cog": phoneNumber("degrees; negative: unknown"),
                "alt": phoneNumber("metres"),
                "batt": ["type": "number", "maximum": 100, "description": "battery percent; negative: unknown"],
            ],
            "if": ["properties": ["_type": ["const": "location"]]],
            "then": ["required": ["lat", "lon"]],
        ]
    }

    static let statuses = ["unknown", "pending", "moving", "holding", "off_route", "arrived", "ended"]
    static let refusals = ["duplicate", "out_of_order", "outlier", "holding", "arrived", "ended"]

    static var config: JSONValue {
        ["type": "object", "properties": [
            "arrival_buffer_m": ["type": "number", "minimum": 1, "maximum": 1000, "default": 50],
            "reroute_distance_m": ["type": "number", "minimum": 10, "maximum": 10000, "default": 100],
            "wait_at_waypoints": ["type": "boolean", "default": true],
            "max_speed_mps": ["type": "number", "minimum": 1, "maximum": 1000, "default": 70],
            "mode": ["type": "string", "enum": ["car", "bicycle", "foot"], "default": "car"],
            "auto_reroute": ["type": "boolean"],
        ]]
    }

    /// "The trip": a snapshot's fields (PROTOCOL 4, 5); `route` and `trail` are left out of a list's items.
    static var trip: JSONValue {
        object([
            ("trip", string),
            ("status", strings(statuses)),
            ("rider", ["description": "as given at creation", "type": ["object", "null"]]),
            ("config", nullable(ref("Config"))),
            ("route", nullable(ref("Line"))),
            ("route_source", ["description": "router: found by the hub (PROTOCOL 16); client: given", "type": ["string", "null"], "enum": ["client", "router", .null]]),
            ("waypoints", array(object([
                ("index", integer), ("lat", number), ("lon", number), ("visited", boolean),
                // PROTOCOL 17: stops.
                ("id", ["description": "the stop's id; null when not given", "type": ["string", "null"]]),
                ("name", ["description": "the stop's name; null when not given", "type": ["string", "null"]]),
                ("dwell_s", ["type": "integer", "minimum": 0, "maximum": 3600]),
                ("eta_s", ["description": "seconds to it, the dwells of the unvisited waypoints before it included; 0 while held there; null once visited or while the trip's own is", "type": ["integer", "null"]]),
                ("remaining_m", ["description": "metres along the route to it; 0 while held there; null once visited or while the trip's own is", "type": ["number", "null"]]),
            ], required: ["index", "lat", "lon", "visited", "id", "name", "dwell_s", "eta_s", "remaining_m"]))),
            ("destination", nullable(ref("Point"))),
            ("position", nullable(ref("Point"))),
            ("bearing", ["type": ["number", "null"], "minimum": 0, "exclusiveMaximum": 360]),
            ("progress", ["type": ["number", "null"], "minimum": 0, "maximum": 1]),
            ("done_m", nullable("number")),
            ("remaining_m", nullable("number")),
            ("eta_s", nullable("integer")),
            ("leg", ["type": "integer", "minimum": 0]),
            ("trail", ["description": "the last 100 fixes as [lon, lat, ts]", "type": "array", "items": array(number, min: 3, max: 3)]),
            ("last_event", ["type": "integer", "minimum": 0]),
            ("last_fix_t", ["description": "when the last stored fix arrived, hub ms since the epoch (PROTOCOL 18)", "type": ["integer", "null"]]),
            ("battery", ["description": "the battery the last fix that had one reported, whole percent; null for a share token", "type": ["integer", "null"], "minimum": 0, "maximum": 100]),
            ("stale", ["description": "no fix for the trip's stale threshold (PROTOCOL 18); null for a trip that does not exist", "type": ["boolean", "null"]]),
        ], required: ["trip", "status", "rider", "config", "waypoints", "destination", "position", "bearing", "progress",
                      "done_m", "remaining_m", "eta_s", "leg", "last_event", "last_fix_t", "battery", "stale"])
    }

    /// A GeoJSON Feature (RFC 7946) of the trail; the arrays of `properties` line up with the coordinates.
    static var trail: JSONValue {
        object([
            ("type", ["const": "Feature"]),
            ("geometry", nullable(object([("type", ["const": "LineString"]), ("coordinates", array(lonLat, min: 2))], required: ["type", "coordinates"]))),
            ("properties", object([
                ("trip", string),
                ("ts", array(integer)),
                ("seq", array(nullable("integer"))),
                ("reason", array(["type": ["string", "null"], "enum": .array(refusals.map { .string($0) } + [.null])])),
            ], required: ["trip", "ts", "seq", "reason"])),
        ], required: ["type", "geometry", "properties"])
    }

    static var clusters: JSONValue {
        object([
            ("t", integer),
            ("zoom", ["type": "integer", "minimum": 0, "maximum": 22]),
            ("bbox", bbox),
            ("total", ["type": "integer", "minimum": 0]),
            ("truncated", boolean),
            ("items", array(object([
                ("id", string), ("lat", number), ("lon", number), ("count", ["type": "integer", "minimum": 1]),
                ("trip", string), ("status", string), ("bearing", number),
                ("stale", ["description": "a single rider's trip is stale (PROTOCOL 18)", "type": "boolean"]),
                ("bounds", bbox), ("expansion_zoom", integer),
            ], required: ["id", "lat", "lon", "count"]))),
        ], required: ["t", "zoom", "bbox", "total", "truncated", "items"])
    }

    static var error: JSONValue {
        object([
            ("error", object([
                ("code", strings(ErrorCode.allCases.map(\.rawValue))),
                ("message", ["type": "string", "description": "plain words, naming the offending field"]),
            ], required: ["code", "message"])),
        ], required: ["error"])
    }

    static var createTrip: JSONValue {
        ["type": "object", "properties": [
            "id": ref("TripID"),
            "route": ref("Line"),
            "route_polyline": ["type": "string", "description": "Google encoded polyline, precision 5"],
            "origin": ["description": "instead of route: where the rider starts; the hub's router finds the route through the waypoints to destination (required then)", "$ref": "#/components/schemas/Point"],
            "waypoints": array(waypointInput, max: 1000),
            "destination": ref("Point"),
            "rider": ["type": "object", "properties": ["id": [:], "name": [:]]],
            "config": ref("Config"),
        ]]
    }

    static var reroute: JSONValue {
        ["type": "object", "description": "route or route_polyline is required", "properties": [
            "route": ref("Line"),
            "route_polyline": string,
            "waypoints": array(waypointInput),
            "destination": ref("Point"),
        ]]
    }

    /// A waypoint as a request gives it (PROTOCOL 17): a point with the stop's `id`, `name`
    /// and `dwell_s`.
    static var waypointInput: JSONValue {
        object([
            ("lat", ["type": "number", "minimum": -90, "maximum": 90]),
            ("lon", ["type": "number", "minimum": -180, "maximum": 180]),
            ("id", ["description": "unique among the trip's waypoints", "type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"]),
            ("name", ["type": "string", "maxLength": 200]),
            ("dwell_s", ["description": "seconds expected there", "type": "integer", "minimum": 0, "maximum": 3600, "default": 0]),
        ], required: ["lat", "lon"])
    }

    static var fix: JSONValue {
        object([
            ("lat", ["type": "number", "minimum": -90, "maximum": 90]),
            ("lon", ["type": "number", "minimum": -180, "maximum": 180]),
            ("ts", ["type": "integer", "minimum": 946_684_800_000]),
            ("seq", ["type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991]),
            ("duration_ms", number),
            ("speed_mps", ["type": "number", "minimum": 0]),
            ("heading", number),
            ("accuracy_m", ["type": "number", "minimum": 0]),
            ("battery", ["description": "the phone's battery, percent (PROTOCOL 18)", "type": "number", "minimum": 0, "maximum": 100]),
        ], required: ["lat", "lon", "ts"])
    }
}
