/// The WebSocket close codes of the protocol (PROTOCOL sections 1, 2, 7 and 9; RFC 6455
/// section 7.4.1), named by what they mean. The raw value is the code on the wire. Every
/// close the hub makes, and every code it logs, is one of these.
public enum CloseCode: UInt16, Sendable, CaseIterable {
    /// 1000: the purpose of the connection is fulfilled (a client that is done).
    case normal = 1000
    /// 1001: the hub is shutting down (SIGTERM or SIGINT, PROTOCOL 9).
    case goingAway = 1001
    /// 1003: a message of a type the protocol does not take (a binary frame, PROTOCOL 1).
    case unsupportedData = 1003
    /// 1005: the peer's close frame carried no code. Never sent; only reported and logged.
    case noStatusReceived = 1005
    /// 1006: the connection ended without a close frame (a dropped or vanished peer).
    /// Never sent; only reported and logged.
    case abnormalClosure = 1006
    /// 1007: a text message that is not valid UTF-8 (PROTOCOL 1).
    case invalidPayload = 1007
    /// 1008: a rule of the protocol was broken: no valid token within the auth timeout, an
    /// expired token (PROTOCOL 2), unsent data over the limit (PROTOCOL 7).
    case policyViolation = 1008
    /// 1009: a message over `--max-message` bytes (PROTOCOL 1).
    case messageTooBig = 1009
}
