import TrackHubCore

extension TripConfig {
    /// Decodes a request's `config` (all fields optional; absent or `null` keeps the default)
    /// with the ranges of PROTOCOL section 5; errors name `config.<field>`.
    public static func decode(from value: JSONValue?, field: String = "config") throws(ProtocolError) -> TripConfig {
        var config = TripConfig()
        guard let value = Fields.present(value) else { return config }
        let object = try Fields.object(value, field)
        let p = field + "."
        if let arrival = try Fields.optionalNumber(
            object["arrival_buffer_m"], p + "arrival_buffer_m", "a number from 1 to 1000", accept: { $0 >= 1 && $0 <= 1000 })
        {
            config.arrivalBufferM = arrival
        }
        if let reroute = try Fields.optionalNumber(
            object["reroute_distance_m"], p + "reroute_distance_m", "a number from 10 to 10000",
            accept: { $0 >= 10 && $0 <= 10_000 })
        {
            config.rerouteDistanceM = reroute
        }
        if let wait = try Fields.optionalBool(object["wait_at_waypoints"], p + "wait_at_waypoints") {
            config.waitAtWaypoints = wait
        }
        if let speed = try Fields.optionalNumber(
            object["max_speed_mps"], p + "max_speed_mps", "a number from 1 to 1000", accept: { $0 >= 1 && $0 <= 1000 })
        {
            config.maxSpeedMps = speed
        }
        if let mode = Fields.present(object["mode"]) {
            guard case .string(let text) = mode, let parsed = TravelMode(rawValue: text) else {
                throw .badRequest("\(p)mode must be one of car, bicycle, foot")
            }
            config.mode = parsed
        }
        if let reroute = try Fields.optionalBool(object["auto_reroute"], p + "auto_reroute") {
            config.autoReroute = reroute
        }
        return config
    }

    /// Writes the config as a request gives it: the four PROTOCOL 5 fields, `mode` unless
    /// `car`, `auto_reroute` only when set (so a request without them reads back equal).
    public func writeRequest(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("arrival_buffer_m", arrivalBufferM)
        writer.field("reroute_distance_m", rerouteDistanceM)
        writer.field("wait_at_waypoints", waitAtWaypoints)
        writer.field("max_speed_mps", maxSpeedMps)
        if mode != .car { writer.field("mode", mode.rawValue) }
        if let autoReroute { writer.field("auto_reroute", autoReroute) }
        writer.endObject()
    }

    /// Writes the config as a JSON object with every field:
    /// `{"arrival_buffer_m":…,"reroute_distance_m":…,"wait_at_waypoints":…,"max_speed_mps":…,
    /// "mode":…,"auto_reroute":…}` (`auto_reroute` not filled in reads as false).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("arrival_buffer_m", arrivalBufferM)
        writer.field("reroute_distance_m", rerouteDistanceM)
        writer.field("wait_at_waypoints", waitAtWaypoints)
        writer.field("max_speed_mps", maxSpeedMps)
        writer.field("mode", mode.rawValue)
        writer.field("auto_reroute", reroutesAutomatically)
        writer.endObject()
    }
}
