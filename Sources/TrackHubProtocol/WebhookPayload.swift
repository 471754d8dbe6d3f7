import TrackHubCore

/// The body of a webhook request (PROTOCOL 12, the Standard Webhooks payload):
/// `{"type": "trip.<name>", "timestamp": "<t as ISO 8601 UTC with ms>", "data": <the event
/// message's fields without type>}`.
///
/// It is made from the event's stored wire bytes (`ServerMessages.event`), so `data` is the
/// event exactly as subscribers got it, field order and number formatting included.
public struct WebhookPayload: Sendable, Equatable {
    /// `trip.<name>`, e.g. `trip.arrived`.
    public var type: String
    /// The event's name (`arrived`), for `--webhook-events`.
    public var eventName: String
    /// The trip id; with `n`, the `webhook-id` (`<trip>:<n>`).
    public var trip: String
    /// The event's number within its trip, from 1; with `trip`, the `webhook-id`.
    public var n: Int
    /// The event's `t`, ms since the epoch.
    public var t: Int64
    /// The request body, UTF-8 JSON.
    public var body: [UInt8]

    /// `<trip>:<n>`: the same on every retry, so a receiver can drop repeats.
    public var webhookID: String { "\(trip):\(n)" }

    /// Builds the payload from a stored `event` message.
    /// - Throws: `ProtocolError` (`bad_request`) when the bytes are not an event message
    ///   with `trip`, `n`, `name` and `t`.
    public init(storedEvent bytes: [UInt8]) throws(ProtocolError) {
        let value = try JSONParser().parse(bytes)
        guard case .object(let object) = value, object["type"]?.stringValue == "event",
            let trip = object["trip"]?.stringValue, let n = object["n"]?.numberValue?.int64Value,
            let name = object["name"]?.stringValue, let t = object["t"]?.numberValue?.int64Value
        else {
            throw .badRequest("not a stored event message (type, trip, n, name, t)")
        }
        self.type = "trip." + name
        self.eventName = name
        self.trip = trip
        self.n = Int(n)
        self.t = t
        var w = JSONWriter(capacity: bytes.count + 64)
        w.beginObject()
        w.field("type", type)
        w.field("timestamp", TrailExport.iso8601(millis: t))
        w.key("data")
        if bytes.starts(with: Self.storedPrefix) {
            // The hub's own encoding starts with the type: the rest is `data` as sent.
            w.raw([UInt8(ascii: "{")] + bytes[Self.storedPrefix.count...])
        } else {
            w.beginObject()
            for (key, member) in object where key != "type" {
                w.key(key)
                w.value(member)
            }
            w.endObject()
        }
        w.endObject()
        self.body = w.finish()
    }

    /// How `ServerMessages.event` starts every event.
    static let storedPrefix = Array(#"{"type":"event","#.utf8)

    /// What is signed: `<webhook-id>.<webhook-timestamp>.<body>` (Standard Webhooks).
    /// - Parameter timestamp: Unix seconds of this attempt.
    public func signedContent(timestamp: Int64) -> [UInt8] {
        Array("\(webhookID).\(timestamp).".utf8) + body
    }
}
