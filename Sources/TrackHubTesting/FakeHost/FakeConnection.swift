import TrackHubLWS

/// What a `FakeServerHost` saw of one WebSocket connection, and how its peer behaves.
public struct FakeConnection: Sendable {
    /// Texts written to the peer, in order.
    public var received: [String] = []
    /// The close code the hub sent, once it did.
    public var closedWith: (code: UInt16, reason: String)?
    /// Whether the hub dropped it without a close handshake.
    public var wasDropped = false
    /// Pings the hub sent.
    public var pings = 0
    /// Whether the connection has ended (`connectionClosed` was delivered).
    public var isClosed = false

    /// false: the peer stopped reading, so the kernel's buffers are full: direct writes must
    /// queue, writeable callbacks do not come, pings cannot be sent.
    var isReading = true
    /// Whether the peer answers pings with pongs.
    var answersPings = true
    /// The hub asked for a writeable callback.
    var wantsWritable = false
}
