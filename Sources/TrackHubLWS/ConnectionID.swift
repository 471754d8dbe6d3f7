/// Names one client connection (WebSocket or HTTP) for the life of the process.
/// The domain holds these, never a libwebsockets pointer.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// The number, counted from 1 per host and never reused; 0 means "no id yet" to the host.
    public let raw: UInt64
    /// An id with this number (a host assigns them; tests make their own).
    public init(raw: UInt64) { self.raw = raw }
    /// `c` and the number (`c42`), as log lines name a connection.
    public var description: String { "c\(raw)" }
}
