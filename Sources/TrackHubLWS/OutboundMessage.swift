import CLibWebSockets

/// One encoded server message, ready for `lws_write`: the payload sits after the headroom
/// libwebsockets needs for its frame header. It is encoded once and the same instance is
/// queued to every subscriber that gets these bytes (never one encoding per subscriber).
///
/// Thread-bound: created on any thread, but once queued it is read and written (lws puts
/// the frame header into the headroom) only on the service thread.
public final class OutboundMessage: @unchecked Sendable {
    /// Headroom in front of the payload, `LWS_PRE`.
    public static let headroom: Int = Int(trackhub_lws_pre())

    /// Headroom plus payload.
    private var storage: [UInt8]

    /// What this message is, for queue policy and metrics.
    public let kind: Kind

    /// How a waiting message is treated when another comes for the same connection (PROTOCOL 7).
    public enum Kind: Sendable {
        /// A reply, event or ack: never dropped, never replaced.
        case reliable
        /// A frame or segment of one trip: a newer one replaces it while it waits (latest-wins).
        case frame(tripSlot: Int)
        /// A `clusters` update: latest-wins per connection.
        case clusters
        /// A trip's snapshot: never dropped, but a newer snapshot of the same trip makes a
        /// waiting one redundant (PROTOCOL 7), so it replaces it instead of queueing again.
        case snapshot(trip: String)
        /// The first answer to a viewport: like a snapshot, keyed by the normalised viewport.
        case viewportReply(key: String)
    }

    /// Wraps bytes that already start with `headroom` bytes of space.
    public init(bufferWithHeadroom: [UInt8], kind: Kind = .reliable) {
        precondition(bufferWithHeadroom.count >= OutboundMessage.headroom)
        self.storage = bufferWithHeadroom
        self.kind = kind
    }

    /// Copies a payload behind fresh headroom.
    public convenience init(payload: some Collection<UInt8>, kind: Kind = .reliable) {
        var buffer = [UInt8](repeating: 0, count: OutboundMessage.headroom)
        buffer.reserveCapacity(OutboundMessage.headroom + payload.count)
        buffer.append(contentsOf: payload)
        self.init(bufferWithHeadroom: buffer, kind: kind)
    }

    /// Payload length in bytes.
    public var count: Int { storage.count - OutboundMessage.headroom }

    /// The payload bytes (for tests and HTTP bodies).
    public var payload: ArraySlice<UInt8> { storage[OutboundMessage.headroom...] }

    /// Calls `body` with a pointer to the payload (headroom writable in front of it).
    func withPayloadPointer<R>(_ body: (UnsafeMutablePointer<UInt8>, Int) -> R) -> R {
        let length = count
        return storage.withUnsafeMutableBufferPointer { buffer in
            // The array always has at least `headroom` bytes, so baseAddress is non-nil.
            body(buffer.baseAddress.unsafelyUnwrapped + OutboundMessage.headroom, length)
        }
    }
}
