import TrackHubCore

/// The body of the hub's answer to an OwnTracks post (PROTOCOL 11 and 18): OwnTracks reads it
/// as a list of messages for the phone. Empty (`[]`), or one `cmd` message in OwnTracks's own
/// remote-configuration form setting how often the phone reports:
///
///     [{"_type":"cmd","action":"setConfiguration",
///       "configuration":{"_type":"configuration","monitoring":2,
///                        "locatorInterval":S,"moveModeLocatorInterval":S}}]
///
/// `monitoring` 2 is OwnTracks's *move* mode, the only one that reports on a timer (the
/// *significant changes* mode reports only after the phone moved some hundreds of metres).
/// The interval is whole seconds, as OwnTracks takes it: iOS reports in move mode after
/// `locatorInterval` seconds (or `locatorDisplacement` metres, whichever comes first);
/// Android uses `moveModeLocatorInterval` in move mode. Both keys are set so that either app
/// gets the interval. (owntracks.org/booklet: tech/json `_type=cmd`, `_type=configuration`;
/// features/location "Move mode".)
public enum OwnTracksAnswer {
    /// `[]`: nothing for the phone.
    public static let empty: [UInt8] = Array("[]".utf8)

    /// The answer: `[]` when `intervalMs` is nil, else the `setConfiguration` command asking
    /// for one location every `intervalMs` (rounded up to whole seconds, at least 1).
    public static func body(settingIntervalMs intervalMs: Int64?) -> [UInt8] {
        guard let intervalMs else { return empty }
        let seconds = Int64(seconds(ofMs: intervalMs))
        var w = JSONWriter(capacity: 200)
        w.beginArray()
        w.beginObject()
        w.field("_type", "cmd")
        w.field("action", "setConfiguration")
        w.key("configuration")
        w.beginObject()
        w.field("_type", "configuration")
        w.field("monitoring", 2)
        w.field("locatorInterval", seconds)
        w.field("moveModeLocatorInterval", seconds)
        w.endObject()
        w.endObject()
        w.endArray()
        return w.finish()
    }

    /// Whole seconds for an interval in ms: rounded up, at least 1 (OwnTracks takes seconds).
    public static func seconds(ofMs intervalMs: Int64) -> Int {
        Int(max(1, (intervalMs + 999) / 1000))
    }

    /// The reporting interval an answer asks for, in ms (the client side: `trackhub simulate`'s
    /// OwnTracks riders); nil when the answer is `[]`, not JSON, or sets no interval.
    public static func requestedIntervalMs(in body: [UInt8]) -> Int64? {
        guard let messages = (try? JSONParser().parse(body))?.arrayValue else { return nil }
        for message in messages {
            guard message["_type"]?.stringValue == "cmd", message["action"]?.stringValue == "setConfiguration",
                let configuration = message["configuration"],
                let seconds = configuration["moveModeLocatorInterval"]?.doubleValue ?? configuration["locatorInterval"]?.doubleValue,
                seconds > 0
            else { continue }
            return Int64((seconds * 1000).rounded())
        }
        return nil
    }
}
