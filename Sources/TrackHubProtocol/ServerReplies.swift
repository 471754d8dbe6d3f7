import TrackHubCore

/// Encoders for the small server replies that need no trip state (PROTOCOL section 4):
/// `welcome`, `pong`, `error`, `unsubscribed`, `ack`. Each returns the message's bytes after
/// `headroom` leading bytes (e.g. libwebsockets' `LWS_PRE`); `re` is written only when there
/// is an id.
public enum ServerReplies {
    /// The protocol version `welcome` announces.
    public static let protocolVersion = 1

    /// `{"type":"pong","re":…,"t":…}`.
    public static func pong(re: MessageID?, t: Int64, headroom: Int = 0) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom, capacity: 48)
        writer.beginObject()
        writer.field("type", "pong")
        writer.reField(re)
        writer.field("t", t)
        writer.endObject()
        return writer.finish()
    }

    /// `{"type":"error","re":…,"code":…,"message":…}`.
    public static func error(re: MessageID?, _ error: ProtocolError, headroom: Int = 0) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom, capacity: 64 + error.message.utf8.count)
        writer.beginObject()
        writer.field("type", "error")
        writer.reField(re)
        writer.field("code", error.code.rawValue)
        writer.field("message", error.message)
        writer.endObject()
        return writer.finish()
    }

    /// `{"type":"unsubscribed","re":…,"trip":…,"reason":…}` (`reason` only when given, e.g. "forbidden").
    public static func unsubscribed(re: MessageID?, trip: String, reason: String? = nil, headroom: Int = 0) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom, capacity: 64)
        writer.beginObject()
        writer.field("type", "unsubscribed")
        writer.reField(re)
        writer.field("trip", trip)
        writer.optionalField("reason", reason)
        writer.endObject()
        return writer.finish()
    }

    /// `{"type":"ack","re":…,"trip":…,"seq":…,"applied":…,"reason":…}` (`seq` when the fix had one,
    /// `reason` when not applied).
    public static func ack(re: MessageID?, trip: String, seq: Int64?, verdict: FixVerdict, headroom: Int = 0) -> [UInt8] {
        ack(re: re, trip: trip, seq: seq, applied: verdict.isApplied, reason: verdict.refusal?.rawValue, headroom: headroom)
    }

    /// `{"type":"ack","re":…,"trip":…,"seq":…,"applied":…,"reason":…}` with the given fields.
    public static func ack(
        re: MessageID?, trip: String, seq: Int64?, applied: Bool, reason: String? = nil, headroom: Int = 0
    ) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom, capacity: 80)
        writer.beginObject()
        writer.field("type", "ack")
        writer.reField(re)
        writeAckMembers(to: &writer, trip: trip, seq: seq, applied: applied, reason: reason)
        writer.endObject()
        return writer.finish()
    }

    /// Writes an ack's members (`trip`, `seq?`, `applied`, `reason?`) into an open object.
    static func writeAckMembers(to writer: inout JSONWriter, trip: String, seq: Int64?, applied: Bool, reason: String?) {
        writer.field("trip", trip)
        writer.optionalField("seq", seq)
        writer.field("applied", applied)
        writer.optionalField("reason", reason)
    }

    /// `{"type":"welcome","re":…,"session":…,"server":…,"protocol":1,"tick_hz":…,"fleet_hz":…}`.
    public static func welcome(
        re: MessageID?, session: String, server: String, tickHz: Int, fleetHz: Double, headroom: Int = 0
    ) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom, capacity: 128)
        writer.beginObject()
        writer.field("type", "welcome")
        writer.reField(re)
        writer.field("session", session)
        writer.field("server", server)
        writer.field("protocol", protocolVersion)
        writer.field("tick_hz", tickHz)
        writer.field("fleet_hz", fleetHz)
        writer.endObject()
        return writer.finish()
    }
}
