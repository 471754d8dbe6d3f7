import TrackHubCore

/// The `id` of a client message, echoed back verbatim as `re` in the direct reply.
public enum MessageID: Sendable, Hashable, CustomStringConvertible {
    /// A string id.
    case string(String)
    /// A number id, kept as its original JSON literal (e.g. `"7"`, `"1.50"`, `"2e3"`) so that
    /// `re` repeats it exactly.
    case number(String)

    /// A number id from an integer.
    public static func integer(_ value: Int64) -> MessageID { .number(String(value)) }

    /// The id as JSON text.
    public var description: String {
        var writer = JSONWriter(capacity: 32)
        writer.messageID(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
