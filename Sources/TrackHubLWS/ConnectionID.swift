/// Names one client connection (WebSocket or HTTP) for the life of the process.
/// The domain holds these, never a libwebsockets pointer.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    public init(raw: UInt64) { self.raw = raw }
    public var description: String { "c\(raw)" }
}
