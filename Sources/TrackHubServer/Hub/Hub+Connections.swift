import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Accepting, feeding and closing WebSocket connections.
extension Hub {
    func upgradeRequested(_ request: UpgradeRequest) -> UpgradeDecision {
        if request.path != "/v1/ws" {
            metrics.upgradesRefused += 1
            return .refuse(.notFound("no WebSocket at \(request.path); the WebSocket is at /v1/ws"))
        }
        if draining {
            metrics.upgradesRefused += 1
            return .refuse(ProtocolError(.unavailable, "the hub is draining; connect to another"))
        }
        if !access.originPolicy.allowsOrigin(request.origin, host: request.host) || !access.originPolicy.allowsHost(request.host) {
            metrics.upgradesRefused += 1
            return .refuse(.forbidden("Origin \(request.origin ?? "") or Host \(request.host ?? "") is not allowed"))
        }
        if access.isSecured, let refusal = access.refusals.refusal(for: request.peerAddress, now: clock.wallMillis()) {
            metrics.upgradesRefused += 1
            return .refuse(refusal)  // --max-refusal-rate: the token is not checked
        }
        if let refusal = access.authorizeUpgrade(request) {  // PROTOCOL 2: a bad ?token= is 401
            metrics.upgradesRefused += 1
            return refusal
        }
        // --max-conns-per-ip is the host's: it counts HTTP and WebSocket connections alike.
        return .accept
    }

    func connectionOpened(_ id: ConnectionID, request: UpgradeRequest) {
        let now = clock.wallMillis()
        fanout.open(Session(id: id, peerAddress: request.peerAddress, now: now, fixRate: config.maxFixRate, grants: access.initialGrants(for: request, now: now)))
    }

    func connectionClosed(_ id: ConnectionID, close: WebSocketClose) {
        routes.clients.connectionClosed(id)  // an HTTP client's searches are dropped unrun
        guard let session = fanout.remove(id) else { return }
        logClosed(session, close: close)
        if let key = session.viewportKey { fleet.viewportRemoved(id, key: key) }
        commands.connectionClosed(id)
    }

    func connectionReceived(_ id: ConnectionID, message: [UInt8]) {
        metrics.messagesIn += 1
        let session = fanout[id]
        session?.messagesIn += 1
        guard let session, !session.isClosing else { return }
        let now = clock.wallMillis()
        let decoded = ClientMessage.decode(message, limits: config.protocolLimits, now: now)
        switch decoded.result {
        case .failure(let error):
            replies.sendError(to: id, re: decoded.id, access.authorizeUndecoded(message, from: id) ?? error)
        case .success(let clientMessage):
            handle(clientMessage, re: decoded.id, from: id, now: now)
        }
    }

    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)? {
        fanout.nextMessage(for: id)
    }

    func connectionAnsweredPing(_ id: ConnectionID) {
        fanout.answeredPing(id)
    }

}
