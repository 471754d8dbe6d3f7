import TrackHubCore

/// Encoders for what a phone, or a client managing phones, sends (PROTOCOL 11): the
/// OwnTracks `location` body and the device registration body. The simulator uses them.
public enum DeviceRequestBodies {
    /// An OwnTracks `location` message: `tst` in whole seconds, `vel` in km/h, `cog` in
    /// degrees, `acc` in metres, each left out when nil.
    public static func ownTracksLocation(lat: Double, lon: Double, tstSeconds: Int64, tid: String, velKmh: Double?, cog: Double?, accM: Double?) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("_type", "location"), ("lat", .number(JSONNumber(lat))), ("lon", .number(JSONNumber(lon))),
            ("tst", .number(JSONNumber(tstSeconds))), ("tid", .string(tid)),
        ]
        if let velKmh { members.append(("vel", .number(JSONNumber(velKmh)))) }
        if let cog { members.append(("cog", .number(JSONNumber(cog)))) }
        if let accM { members.append(("acc", .number(JSONNumber(accM)))) }
        var w = JSONWriter(headroom: 0, capacity: 160)
        w.value(.object(JSONObject(members)))
        return w.finish()
    }

    /// `PUT /v1/devices/{device}`: `{trip, name?}`.
    public static func device(trip: String?, name: String? = nil) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 96)
        w.beginObject()
        w.optionalField("trip", trip)
        w.optionalField("name", name)
        w.endObject()
        return w.finish()
    }
}
