import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Accepting, feeding and closing WebSocket connections.
extension Hub {
    func upgradeRequested(_ request: UpgradeRequest) -> UpgradeDecision {
        if request.path != "/v1/ws" {
            services.metrics.upgradesRefused += 1
            return .refuse(.notFound("no WebSocket at \(request.path); the WebSocket is at /v1/ws"))
        }
        if draining {
            services.metrics.upgradesRefused += 1
            return .refuse(ProtocolError(.unavailable, "the hub is draining; connect to another"))
        }
        if !services.access.originPolicy.allowsOrigin(request.origin, host: request.host) || !services.access.originPolicy.allowsHost(request.host) {
            services.metrics.upgradesRefused += 1
            return .refuse(.forbidden("Origin \(request.origin ?? "") or Host \(request.host ?? "") is not allowed"))
        }
        if services.access.isSecured, let refusal = services.access.refusals.refusal(for: request.peerAddress, now: services.clock.wallMillis()) {
            services.metrics.upgradesRefused += 1
            return .refuse(refusal)  // --max-refusal-rate: the token is not checked
        }
        if let refusal = services.access.authorizeUpgrade(request) {  // PROTOCOL 2: a bad ?token= is 401
            services.metrics.upgradesRefused += 1
            return refusal
        }
        // --max-conns-per-ip is the host's: it counts HTTP and WebSocket connections alike.
        return .accept
    }

    func connectionOpened(_ id: ConnectionID, request: UpgradeRequest) {
        let now = services.clock.wallMillis()
        services.fanout.open(Session(id: id, peerAddress: request.peerAddress, now: now, fixRate: config.maxFixRate, grants: services.access.initialGrants(for: request, now: now)))
    }

    func connectionClosed(_ id: ConnectionID, close: WebSocketClose) {
        services.routes.clients.connectionClosed(id)  // an HTTP client's searches are dropped unrun
        guard let session = services.fanout.remove(id) else { return }
        logClosed(session, close: close)
        if let key = session.viewportKey { services.fleet.viewportRemoved(id, key: key) }
        commands.connectionClosed(id)
    }

    func connectionReceived(_ id: ConnectionID, message: [UInt8]) {
        services.metrics.messagesIn += 1
        let session = services.fanout[id]
        session?.messagesIn += 1
        guard let session, !session.isClosing else { return }
        let now = services.clock.wallMillis()
        let decoded = ClientMessage.decode(message, limits: config.protocolLimits, now: now)
        switch decoded.result {
        case .failure(let error):
            services.replies.sendError(to: id, re: decoded.id, services.access.authorizeUndecoded(message, from: id) ?? error)
        case .success(let clientMessage):
            // A fix may be committed right here when the store is idle (TripStorage.persist).
            services.storage.committingHere { handle(clientMessage, re: decoded.id, from: id, now: now) }
        }
    }

    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)? {
        services.fanout.nextMessage(for: id)
    }

    func connectionAnsweredPing(_ id: ConnectionID) {
        services.fanout.answeredPing(id)
    }

}
