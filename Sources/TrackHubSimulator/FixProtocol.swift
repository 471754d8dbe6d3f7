/// How simulated couriers send their fixes (`trackhub simulate --protocol`): TrackHub's own
/// `fix` op on the WebSocket, or a phone app's protocol over HTTP (PROTOCOL 11) for a device
/// each rider registers and binds to its trip. Events still come over the WebSocket.
public enum FixProtocol: String, Sendable, CaseIterable {
    case trackhub, osmand, owntracks
}
