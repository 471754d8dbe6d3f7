import TrackHubLWS
import TrackHubProtocol

/// What the server host tells the hub, forwarded to the hub's own (internal) handlers.
///
/// `ServerHostDelegate` is public in TrackHubLWS, and a public class's witnesses of a public
/// protocol would have to be public too: this bridge keeps the hub's handlers out of
/// TrackHubServer's API. The host holds it strongly; it holds the hub weakly (the hub owns
/// the host), and answers as a host without a delegate would once the hub is gone.
final class HubHostDelegate: ServerHostDelegate {
    private weak var hub: Hub?

    init(hub: Hub) { self.hub = hub }

    func upgradeRequested(_ request: UpgradeRequest) -> UpgradeDecision {
        hub?.upgradeRequested(request) ?? .refuse(ProtocolError(.unavailable, "the hub is stopping"))
    }

    func connectionOpened(_ id: ConnectionID, request: UpgradeRequest) {
        hub?.connectionOpened(id, request: request)
    }

    func connectionReceived(_ id: ConnectionID, message: [UInt8]) {
        hub?.connectionReceived(id, message: message)
    }

    func connectionClosed(_ id: ConnectionID, close: WebSocketClose) {
        hub?.connectionClosed(id, close: close)
    }

    func connectionAnsweredPing(_ id: ConnectionID) {
        hub?.connectionAnsweredPing(id)
    }

    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)? {
        hub?.nextMessage(for: id)
    }

    func httpRequest(_ request: HTTPRequest) {
        hub?.httpRequest(request)
    }

    func httpRefusalBeforeBody(_ request: HTTPRequest, declaredLength: Int) -> ProtocolError? {
        hub.flatMap { hub in
            hub.services.access.httpRefusalBeforeBody(request, declaredLength: declaredLength, isSurelyUnknownDevice: hub.services.devices.isSurelyUnknownDevice)
        }
    }

    func httpRefused(_ request: HTTPRequest, reason: HTTPRefusalReason) {
        hub?.httpRefused(request, reason: reason)
    }

    func httpCompleted(request: HTTPRequest, status: Int, durationSeconds: Double) {
        hub?.httpCompleted(request: request, status: status, durationSeconds: durationSeconds)
    }

    func responseHeaders(for request: HTTPRequest) -> [(name: String, value: String)] {
        hub?.services.access.responseHeaders(for: request) ?? []
    }

    func serviceWoke() {
        hub?.serviceWoke()
    }

    func timerFired() {
        hub?.timerFired()
    }
}
