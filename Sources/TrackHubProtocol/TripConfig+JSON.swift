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
        return config
    }

    /// Writes the config as a JSON object with every field:
    /// `{"arrival_buffer_m":…,"reroute_distance_m":…,"wait_at_waypoints":…,"max_speed_mps":…}`.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("arrival_buffer_m", arrivalBufferM)
        writer.field("reroute_distance_m", rerouteDistanceM)
        writer.field("wait_at_waypoints", waitAtWaypoints)
        writer.field("max_speed_mps", maxSpeedMps)
        writer.endObject()
    }
}
