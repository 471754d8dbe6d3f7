import TrackHubCore
import TrackHubProtocol

/// What the OpenAPI document says of each row of the route table (PROTOCOL 5 and 14). Every
/// `APIRoute.Kind` must answer here (the switches are exhaustive), so the document cannot
/// lack a route the table has.
extension APIRoute.Kind {
    struct Query: Sendable {
        var name: String
        var schema: JSONValue
        var required = false
        var description: String
    }

    var summary: String {
        switch self {
        case .listTrips: return "List trips, ordered by id (bytewise)"
        case .createTrip: return "Create a trip"
        case .getTrip: return "The trip"
        case .endTrip: return "End a trip (again on an ended trip: 200, no second event)"
        case .putRoute: return "Give the trip a new route"
        case .postFixes: return "A batch of fixes (a courier's offline backlog), answered once durable"
        case .proceed: return "Let a holding trip leave its waypoint"
        case .trail: return "Every fix stored for the trip, ordered by (ts, seq)"
        case .fleetClusters: return "The fleet, clustered for a map viewport"
        case .openAPI: return "This document"
        case .listDevices: return "Registered devices (phone apps), ordered by id"
        case .getDevice: return "A device: its trip, name, last_seen and last_position"
        case .putDevice: return "Register a device or bind it to a trip (trip null: unbind)"
        case .deleteDevice: return "Forget a device"
        case .osmandGet, .osmandPost: return "A fix in the OsmAnd protocol (Traccar Client, OsmAnd): query string, form or JSON body"
        case .ownTracks: return "A message of OwnTracks' HTTP mode; a location is a fix of the device's trip"
        case .createShare: return "A share link for the customer's page (/t/<token>): a share-scoped token for this trip (409 on an open hub)"
        case .revokeShare: return "Revoke a share link at once and durably: its subscribers are unsubscribed, its token refused"
        case .findRoute: return "A route from the hub's router (--router) through the points in order, without making a trip"
        }
    }

    var scopeNote: String {
        switch access {
        case .anyone: return "No token needed."
        case .anyToken: return "Any valid token; the list holds only the token's trips unless admin or fleet."
        case .viewTrip: return "Scope viewer or courier, with the trip in the token's trips (or admin)."
        case .followTrip: return "Scope viewer or courier with the trip in the token's trips (or admin); or share, its one trip, seen as a customer sees it."
        case .driveTrip: return "Scope courier, with the trip in the token's trips (or admin)."
        case .fleet: return "Scope fleet (or admin)."
        case .admin: return "Scope admin."
        case .device: return "No token: a registered device id is the credential."
        }
    }

    var queries: [Query] {
        switch self {
        case .listTrips:
            return [
                Query(name: "status", schema: OpenAPISchemas.string, description: "comma-separated statuses"),
                Query(name: "limit", schema: ["type": "integer", "minimum": 1, "maximum": 1000, "default": 100], description: "page size"),
                Query(name: "after", schema: OpenAPISchemas.string, description: "list ids after this one (the previous page's next)"),
            ]
        case .trail:
            return [
                Query(name: "from", schema: OpenAPISchemas.integer, description: "earliest ts, ms, inclusive"),
                Query(name: "to", schema: OpenAPISchemas.integer, description: "latest ts, ms, inclusive"),
                Query(name: "format", schema: OpenAPISchemas.strings(TrailFormat.allCases.map(\.rawValue)), description: "geojson (default), gpx (GPX 1.1) or csv"),
            ]
        case .fleetClusters:
            return [
                Query(name: "bbox", schema: OpenAPISchemas.string, description: "west,south,east,north; default the world"),
                Query(name: "zoom", schema: ["type": "integer", "minimum": 0, "maximum": 22], required: true, description: "map zoom, floored"),
            ]
        case .osmandGet, .osmandPost:
            return [
                Query(name: "id", schema: OpenAPISchemas.string, description: "the device id (or deviceid)"),
                Query(name: "lat", schema: OpenAPISchemas.number, description: "degrees (or location=LAT,LON)"),
                Query(name: "lon", schema: OpenAPISchemas.number, description: "degrees"),
                Query(name: "timestamp", schema: OpenAPISchemas.string, description: "Unix s, ms, ISO 8601 or YYYY-MM-DD HH:MM:SS (UTC)"),
                Query(name: "speed", schema: OpenAPISchemas.number, description: "knots"),
                Query(name: "bearing", schema: OpenAPISchemas.number, description: "degrees (or heading)"),
                Query(name: "altitude", schema: OpenAPISchemas.number, description: "metres"),
                Query(name: "accuracy", schema: OpenAPISchemas.number, description: "metres"),
                Query(name: "batt", schema: OpenAPISchemas.number, description: "battery percent"),
            ]
        case .findRoute:
            return [
                Query(name: "from", schema: OpenAPISchemas.string, required: true, description: "LAT,LON where the route starts"),
                Query(name: "to", schema: OpenAPISchemas.string, required: true, description: "LAT,LON where it ends"),
                Query(name: "via", schema: OpenAPISchemas.string, description: "stops in order: LAT,LON;LAT,LON"),
                Query(name: "mode", schema: OpenAPISchemas.strings(TravelMode.allCases.map(\.rawValue)), description: "car (default), bicycle or foot"),
            ]
        case .createTrip, .getTrip, .endTrip, .putRoute, .postFixes, .proceed, .openAPI, .listDevices, .getDevice,
            .putDevice, .deleteDevice, .ownTracks, .createShare, .revokeShare:
            return []
        }
    }

    /// A request body as the document gives it: each media type the route reads with its
    /// schema's name, and whether a request may come without one.
    struct RequestBody: Sendable {
        var required: Bool
        var content: [(type: String, schema: String)]
        var description: String?
    }

    /// The route's request body; nil for a route that reads none (every GET and DELETE, and
    /// `proceed`, which ignores what is sent). A POST or PUT that reads one must say so here:
    /// HTTPRouteTableTests checks both ways against what `APICall.parse` reads.
    var requestBody: RequestBody? {
        switch self {
        case .createTrip: return RequestBody(required: true, content: [("application/json", "CreateTrip")])
        case .putRoute: return RequestBody(required: true, content: [("application/json", "Reroute")])
        case .postFixes: return RequestBody(required: true, content: [("application/json", "FixBatch")])
        case .putDevice: return RequestBody(required: true, content: [("application/json", "DevicePut")])
        case .createShare:
            return RequestBody(required: false, content: [("application/json", "ShareCreate")], description: "none or empty: ttl_s takes its default")
        case .osmandPost:
            return RequestBody(
                required: false,
                content: [("application/x-www-form-urlencoded", "OsmAndForm"), ("application/json", "OsmAndJSON")],
                description: "OsmAnd's fields as a form (they may come in the query string instead; a form's win over the query's), or Traccar Client 9's JSON; a body whose first non-blank byte is { is JSON. At most 64 KiB, a form at most 100 fields")
        case .ownTracks:
            return RequestBody(
                required: true, content: [("application/json", "OwnTracksMessage")],
                description: "one OwnTracks message; a location is a fix, any other _type is ignored. At most 64 KiB")
        case .listTrips, .getTrip, .endTrip, .proceed, .trail, .fleetClusters, .openAPI, .listDevices, .getDevice,
            .deleteDevice, .osmandGet, .revokeShare, .findRoute:
            return nil
        }
    }

    /// The success status and its body: media type to schema name (nil: a schema given inline).
    var success: (status: Int, content: [(type: String, schema: String?)]) {
        switch self {
        case .listTrips: return (200, [("application/json", "TripList")])
        case .createTrip: return (201, [("application/json", "Trip")])
        case .getTrip, .endTrip, .putRoute, .proceed: return (200, [("application/json", "Trip")])
        case .postFixes: return (200, [("application/json", "Acks")])
        case .trail:
            return (200, [("application/geo+json", "Trail"), ("application/gpx+xml", nil), ("text/csv", nil)])
        case .fleetClusters: return (200, [("application/json", "Clusters")])
        case .openAPI: return (200, [("application/json", nil)])
        case .listDevices: return (200, [("application/json", "DeviceList")])
        case .getDevice, .putDevice, .deleteDevice: return (200, [("application/json", "Device")])
        case .osmandGet, .osmandPost: return (200, [("text/plain", nil)])
        case .ownTracks: return (200, [("application/json", "OwnTracksAnswer")])
        case .createShare: return (201, [("application/json", "Share")])
        case .revokeShare: return (200, [("application/json", "ShareRevoked")])
        case .findRoute: return (200, [("application/json", "FoundRoute")])
        }
    }

    /// The error statuses the route can answer (PROTOCOL 4, 5, 14).
    var errors: [Int] {
        var statuses: [Int] = []
        if access != .anyone && access != .device { statuses.append(401) }
        switch self {
        case .listTrips: statuses += [400]
        case .createTrip: statuses += [400, 403, 409, 413, 503]
        case .getTrip: statuses += [400, 403, 404]
        case .endTrip: statuses += [400, 403, 404, 503]
        case .putRoute: statuses += [400, 403, 404, 409, 413, 503]
        case .postFixes: statuses += [400, 403, 404, 413, 503]
        case .proceed: statuses += [400, 403, 404, 409, 503]
        case .trail: statuses += [400, 403, 404, 503]
        case .fleetClusters: statuses += [400, 403]
        case .openAPI: break
        case .listDevices: statuses += [403]
        case .getDevice, .deleteDevice: statuses += [400, 403, 404, 503]
        case .putDevice: statuses += [400, 403, 404, 413, 503]
        case .osmandGet, .osmandPost, .ownTracks: statuses += [400, 404, 413, 429, 503]
        case .createShare: statuses += [400, 403, 404, 409, 413, 503]
        case .revokeShare: statuses += [400, 403, 404, 409, 503]
        case .findRoute: statuses += [400, 403, 413, 503]
        }
        return statuses
    }
}
