import TrackHubCore

extension FixInput {
    /// The earliest `ts` accepted: 2000-01-01T00:00:00Z in ms.
    public static let earliestTimestamp: Int64 = 946_684_800_000
    /// The largest `seq`: 2^53 − 1.
    public static let maxSeq: Int64 = 9_007_199_254_740_991

    /// Decodes and validates the fix fields of `object` (PROTOCOL section 3, `fix`); other
    /// members are ignored. Errors name the field with `fieldPrefix` in front (`fixes[3].ts`).
    /// `now` is the hub's clock in ms; `ts` may be at most `limits.maxClockSkewMs` ahead of it.
    /// `heading` is normalised into [0, 360).
    public static func decode(
        from object: JSONObject, fieldPrefix: String = "", limits: ProtocolLimits = .default, now: Int64
    ) throws(ProtocolError) -> FixInput {
        let p = fieldPrefix
        let lat = try Fields.requiredNumber(object["lat"], p + "lat", Fields.latitudeRequirement) { abs($0) <= 90 }
        let lon = try Fields.requiredNumber(object["lon"], p + "lon", Fields.longitudeRequirement) { abs($0) <= 180 }

        guard let tsValue = object["ts"] else { throw Fields.missing(p + "ts") }
        let tsDouble = try Fields.integral(tsValue, p + "ts")
        guard tsDouble >= Double(earliestTimestamp) else {
            throw .badRequest("\(p)ts must not be before 2000-01-01 (\(earliestTimestamp) ms since the epoch)")
        }
        let skew = max(0, limits.maxClockSkewMs)
        let (latest, overflow) = now.addingReportingOverflow(skew)
        guard tsDouble <= Double(overflow ? Int64.max : latest), let ts = Int64(exactly: tsDouble),
            overflow || ts <= latest
        else {
            throw .badRequest("\(p)ts is more than \(skew) ms ahead of the hub's clock")
        }

        let seq = try Fields.optionalInteger(
            object["seq"], p + "seq", 0...maxSeq, rangeMessage: "\(p)seq must be an integer from 0 to \(maxSeq)")
        let duration = try Fields.optionalNumber(object["duration_ms"], p + "duration_ms", "a finite number")
        let speed = try Fields.optionalNumber(object["speed_mps"], p + "speed_mps", "a number ≥ 0") { $0 >= 0 }
        var heading = try Fields.optionalNumber(object["heading"], p + "heading", "a finite number")
        if let raw = heading {
            var normalized = raw.truncatingRemainder(dividingBy: 360)
            if normalized < 0 { normalized += 360 }
            if normalized >= 360 { normalized = 0 }
            heading = normalized == 0 ? 0 : normalized
        }
        let accuracy = try Fields.optionalNumber(object["accuracy_m"], p + "accuracy_m", "a number ≥ 0") { $0 >= 0 }
        // PROTOCOL 18: the phone's battery, a percentage.
        let battery = try Fields.optionalNumber(object["battery"], p + "battery", "a number from 0 to 100") { (0...100).contains($0) }
        return FixInput(
            lat: lat, lon: lon, ts: ts, seq: seq, durationMs: duration, speedMps: speed, heading: heading,
            accuracyM: accuracy, batteryPercent: battery)
    }
}
