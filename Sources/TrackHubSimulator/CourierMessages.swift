import TrackHubCore
import TrackHubProtocol

/// One fix as the simulator sends it (PROTOCOL 3, `fix`).
public struct SimulatedFix: Sendable, Equatable {
    public var trip: String
    public var seq: Int64
    public var ts: Int64
    public var lat: Double
    public var lon: Double
    public var durationMs: Int64
    public var speedMps: Double?
    public var heading: Double?
    public var accuracyM: Double?
}

/// Encodes the client messages a simulated courier sends.
enum CourierMessages {
    static func fix(_ fix: SimulatedFix, id: Int) -> String {
        var w = JSONWriter(capacity: 200)
        w.object { w in
            w.field("op", "fix")
            w.field("id", id)
            w.field("trip", fix.trip)
            w.field("seq", fix.seq)
            w.field("ts", fix.ts)
            w.key("lat"); w.coordinate(fix.lat)
            w.key("lon"); w.coordinate(fix.lon)
            w.field("duration_ms", fix.durationMs)
            if let speed = fix.speedMps { w.key("speed_mps"); w.double((speed * 10).rounded() / 10) }
            if let heading = fix.heading { w.key("heading"); w.double(heading.rounded()) }
            if let accuracy = fix.accuracyM { w.key("accuracy_m"); w.double(accuracy) }
        }
        return String(decoding: w.payload, as: UTF8.self)
    }

    static func proceed(trip: String, id: Int) -> String {
        simple(op: "proceed", trip: trip, id: id)
    }

    static func subscribe(trip: String, id: Int) -> String {
        var w = JSONWriter()
        w.object { w in
            w.field("op", "subscribe")
            w.field("id", id)
            w.field("trip", trip)
            w.field("mode", "segments")
            // Subscribed right after the trip was created: `since_event` 0 replays what came
            // before (`trip_created`), so the summary's events are complete.
            w.field("since_event", 0)
        }
        return String(decoding: w.payload, as: UTF8.self)
    }

    static func unsubscribe(trip: String, id: Int) -> String {
        simple(op: "unsubscribe", trip: trip, id: id)
    }

    private static func simple(op: String, trip: String, id: Int) -> String {
        var w = JSONWriter()
        w.object { w in
            w.field("op", op)
            w.field("id", id)
            w.field("trip", trip)
        }
        return String(decoding: w.payload, as: UTF8.self)
    }

    /// `POST /v1/trips` body: a route with via points, or only a rider (a recorded trace).
    static func createTrip(route: Route?, waypoints: [GeoPoint], riderID: String, riderName: String) -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.object { w in
            if let route {
                w.key("route")
                w.array { w in for p in route.points { w.lonLat(lon: p.lon, lat: p.lat) } }
                w.key("waypoints")
                w.array { w in
                    for p in waypoints {
                        w.object { w in
                            w.key("lat"); w.coordinate(p.lat)
                            w.key("lon"); w.coordinate(p.lon)
                        }
                    }
                }
            }
            w.key("rider")
            w.object { w in
                w.field("id", riderID)
                w.field("name", riderName)
            }
        }
        return Array(w.payload)
    }

    /// `PUT /v1/trips/{id}/route` body: the new route (unvisited via points are kept).
    static func reroute(_ route: Route) -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.object { w in
            w.key("route")
            w.array { w in for p in route.points { w.lonLat(lon: p.lon, lat: p.lat) } }
        }
        return Array(w.payload)
    }
}

/// A message from the hub, reduced to what a courier acts on.
enum HubMessage: Equatable {
    case ack(re: Int?, trip: String?, applied: Bool, reason: String?)
    case event(trip: String, name: String, index: Int?)
    case error(re: Int?, code: String, message: String)
    case other

    static func decode(_ bytes: [UInt8]) -> HubMessage? {
        guard let value = try? JSONParser().parse(bytes), let type = value["type"]?.stringValue else { return nil }
        let re = value["re"]?.numberValue?.int64Value.map { Int($0) }
        switch type {
        case "ack":
            return .ack(re: re, trip: value["trip"]?.stringValue, applied: value["applied"]?.boolValue ?? false, reason: value["reason"]?.stringValue)
        case "event":
            guard let trip = value["trip"]?.stringValue, let name = value["name"]?.stringValue else { return .other }
            return .event(trip: trip, name: name, index: value["index"]?.numberValue?.int64Value.map { Int($0) })
        case "error":
            return .error(re: re, code: value["code"]?.stringValue ?? "?", message: value["message"]?.stringValue ?? "")
        default:
            return .other
        }
    }
}
