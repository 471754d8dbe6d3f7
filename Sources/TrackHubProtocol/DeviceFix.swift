import TrackHubCore

/// A fix sent by a phone app in its own protocol (PROTOCOL 11): the device that sent it and
/// the fix as the hub judges it (no `seq`; altitude and battery kept with it).
public struct DeviceFix: Sendable, Equatable {
    /// The device id (1–64 characters of the trip-id alphabet): its credential.
    public var device: String
    /// The fix for the device's trip: no `seq` (a resend with the same `ts` is a `duplicate`),
    /// speed in m/s, heading in [0, 360); altitude (m) and battery (percent) when the app sent them.
    public var fix: FixInput

    /// A fix of `device`, already converted to the hub's units by the OsmAnd or OwnTracks decoder.
    public init(device: String, fix: FixInput) {
        self.device = device
        self.fix = fix
    }

    /// The protocols a device fix comes in; the raw value is the metrics label.
    public enum Source: String, Sendable, CaseIterable {
        case osmand, owntracks
    }

    /// Checks a fix's time against PROTOCOL 3's rules (not before 2000, not more than the
    /// clock skew ahead of `now`); the error names `field`.
    static func checkTimestamp(_ ts: Int64, field: String, limits: ProtocolLimits, now: Int64) throws(ProtocolError) {
        guard ts >= FixInput.earliestTimestamp else {
            throw .badRequest("\(field) must not be before 2000-01-01")
        }
        let skew = max(0, limits.maxClockSkewMs)
        let (latest, overflow) = now.addingReportingOverflow(skew)
        guard overflow || ts <= latest else {
            throw .badRequest("\(field) is more than \(skew) ms ahead of the hub's clock")
        }
    }

    /// A heading in [0, 360), or nil for a negative one (unknown, PROTOCOL 11).
    static func heading(_ raw: Double?) -> Double? {
        guard let raw, raw >= 0 else { return nil }
        let normalized = raw.truncatingRemainder(dividingBy: 360)
        return normalized >= 360 ? 0 : normalized
    }

    /// A value where a negative one means unknown (speed, accuracy, battery).
    static func known(_ raw: Double?) -> Double? {
        guard let raw, raw >= 0 else { return nil }
        return raw
    }
}
