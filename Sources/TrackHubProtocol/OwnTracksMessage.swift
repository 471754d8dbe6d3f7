import TrackHubCore

/// A message OwnTracks posts in HTTP mode (PROTOCOL 11): a `location` becomes a
/// `DeviceFix`; any other `_type` (`transition`, `waypoint`, `lwt`, ...) is ignored and
/// answered `[]`. Pure: no I/O. Errors are `bad_request` naming the field.
public enum OwnTracksMessage {
    /// Decodes the body posted for `device`; nil for a message that is not a location.
    /// `tst` (Unix seconds) missing: `now`. `vel` is km/h; negative values mean unknown.
    public static func parse(device: String, body: [UInt8], limits: ProtocolLimits = .default, now: Int64) throws(ProtocolError) -> DeviceFix? {
        try OsmAndRequest.checkDevice(device, field: "device")
        let root: JSONValue
        do {
            root = try JSONParser(maxDepth: limits.maxNestingDepth).parse(body)
        } catch {
            throw ProtocolError(error.code, "body is not valid JSON: \(error.message)")
        }
        guard let object = root.objectValue else { throw .badRequest("body must be a JSON object with _type") }
        guard let typeValue = Fields.present(object["_type"]) else { throw Fields.missing("_type") }
        guard let type = typeValue.stringValue else { throw .badRequest("_type must be a string") }
        guard type == "location" else { return nil }
        let lat = try Fields.requiredNumber(object["lat"], "lat", Fields.latitudeRequirement) { abs($0) <= 90 }
        let lon = try Fields.requiredNumber(object["lon"], "lon", Fields.longitudeRequirement) { abs($0) <= 180 }
        var ts = now
        if let tst = try Fields.optionalNumber(object["tst"], "tst", "Unix seconds (a number ≥ 0)", accept: { $0 >= 0 }) {
            guard let ms = DeviceTimestamp.epochValue(tst) else { throw .badRequest("tst must be Unix seconds") }
            ts = ms
        }
        try DeviceFix.checkTimestamp(ts, field: "tst", limits: limits, now: now)
        func number(_ name: String) throws(ProtocolError) -> Double? {
            try Fields.optionalNumber(object[name], name, "a finite number")
        }
        let battery = DeviceFix.known(try number("batt"))
        if let battery, battery > 100 { throw .badRequest("batt must be a percentage from 0 to 100") }
        let fix = FixInput(
            lat: lat, lon: lon, ts: ts, speedMps: DeviceFix.known(try number("vel")).map { $0 / 3.6 },
            heading: DeviceFix.heading(try number("cog")), accuracyM: DeviceFix.known(try number("acc")),
            altitudeM: try number("alt"), batteryPercent: battery)
        return DeviceFix(device: device, fix: fix)
    }
}
