/// How a WebSocket ended, as far as the host can tell: the close code the hub sent, else
/// the one the peer sent, else none (the TCP connection ended without a close frame: a
/// drop for unanswered pings, a peer that vanished, or a close lws made on its own, e.g. for
/// invalid UTF-8, whose code lws does not report).
public enum WebSocketClose: Sendable, Equatable {
    /// The hub sent a close frame with this code.
    case hub(UInt16)
    /// The peer sent one first, with this code.
    case peer(UInt16)
    /// No close frame was seen.
    case none

    /// The code for the log: 1006 (RFC 6455: closed abnormally, no close frame) for `none`.
    public var code: Int {
        switch self {
        case .hub(let code), .peer(let code): Int(code)
        case .none: 1006
        }
    }

    /// Who closed it, for the access log's `closed_by`: `hub`, `peer` or `none`.
    public var sender: String {
        switch self {
        case .hub: "hub"
        case .peer: "peer"
        case .none: "none"
        }
    }
}
