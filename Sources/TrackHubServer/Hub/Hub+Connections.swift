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
        if !originPolicy.allowsOrigin(request.origin, host: request.host) || !originPolicy.allowsHost(request.host) {
            metrics.upgradesRefused += 1
            return .refuse(.forbidden("Origin \(request.origin ?? "") or Host \(request.host ?? "") is not allowed"))
        }
        if isSecured, let refusal = refusalRateLimit(peer: request.peerAddress, now: clock.wallMillis()) {
            metrics.upgradesRefused += 1
            return .refuse(refusal)  // --max-refusal-rate: the token is not checked
        }
        if let refusal = authorizeUpgrade(request) {  // PROTOCOL 2: a bad ?token= is 401
            metrics.upgradesRefused += 1
            return refusal
        }
        // --max-conns-per-ip is the host's: it counts HTTP and WebSocket connections alike.
        return .accept
    }

    func connectionOpened(_ id: ConnectionID, request: UpgradeRequest) {
        let now = clock.wallMillis()
        sessions[id] = Session(id: id, peerAddress: request.peerAddress, now: now, fixRate: config.maxFixRate, grants: initialGrants(for: request, now: now))
        metrics.connectionsOpened += 1
        metrics.connectionsOpen += 1
    }

    func connectionClosed(_ id: ConnectionID, close: WebSocketClose) {
        routeSearchClients.connectionClosed(id)  // an HTTP client's searches are dropped unrun
        guard let session = sessions.removeValue(forKey: id) else { return }
        logClosed(session, close: close)
        metrics.connectionsOpen -= 1
        for trip in session.subscriptions.keys {
            removeSubscriber(id, from: trip)
        }
        if let key = session.viewportKey { fleetViewportRemoved(id, key: key) }
        commands.connectionClosed(id)
    }

    func connectionReceived(_ id: ConnectionID, message: [UInt8]) {
        metrics.messagesIn += 1
        let session = sessions[id]
        session?.messagesIn += 1
        guard let session, !session.isClosing else { return }
        let now = clock.wallMillis()
        let decoded = ClientMessage.decode(message, limits: config.protocolLimits, now: now)
        switch decoded.result {
        case .failure(let error):
            sendError(to: id, re: decoded.id, authorizeUndecoded(message, from: id) ?? error)
        case .success(let clientMessage):
            handle(clientMessage, re: decoded.id, from: id, now: now)
        }
    }

    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)? {
        guard let session = sessions[id] else { return nil }
        session.awaitingWritable = false
        guard let message = session.queue.pop() else {
            return nil
        }
        sessionPolicy.afterWriting(session)
        let hasMore = session.queue.hasMessageToWrite  // not when stopped at a reservation
        if hasMore { session.awaitingWritable = true }
        metrics.messagesOut += 1
        metrics.bytesOut += message.count
        session.messagesOut += 1
        return (message, hasMore)
    }

    // MARK: - Queueing

    /// Queues one message to a connection and asks for a writeable callback if needed.
    func enqueue(_ message: OutboundMessage, to id: ConnectionID) {
        guard let session = sessions[id], !session.isClosing else { return }
        if session.queue.isEmpty && !session.awaitingWritable {
            switch host.writeNow(id, message) {
            case .written:
                metrics.messagesOut += 1
                metrics.bytesOut += message.count
                session.messagesOut += 1
                return
            case .failed:
                return  // lws closes it; connectionClosed cleans up
            case .mustQueue:
                break
            }
        }
        switch session.queue.push(message) {
        case .appended: break
        case .replacedFrame: metrics.framesDropped += 1
        case .replacedReply: metrics.repliesReplaced += 1
        }
        if case .close(let code, let reason) = sessionPolicy.afterQueueing(session, now: clock.wallMillis()) {
            metrics.slowConsumerCloses += 1
            metrics.unsentCapCloses += 1
            closeSession(id, code: code, reason: reason)
            return
        }
        let needsWritable = !session.awaitingWritable
        session.awaitingWritable = true
        if needsWritable { host.requestWritable(id) }
    }

    /// Puts the messages read for a reservation in its place, then writes as `enqueue` does
    /// (a reservation replaced meanwhile, or a closed connection: they are dropped).
    func fillReservation(_ ticket: UInt64, with messages: [OutboundMessage], for id: ConnectionID) {
        guard let session = sessions[id], !session.isClosing, session.queue.fill(ticket, with: messages) else { return }
        if case .close(let code, let reason) = sessionPolicy.afterQueueing(session, now: clock.wallMillis()) {
            metrics.slowConsumerCloses += 1
            metrics.unsentCapCloses += 1
            closeSession(id, code: code, reason: reason)
            return
        }
        if !session.awaitingWritable {
            session.awaitingWritable = true
            host.requestWritable(id)
        }
    }

    /// Queues a payload without headroom (small replies).
    func enqueue(payload: [UInt8], to id: ConnectionID) {
        enqueue(OutboundMessage(payload: payload), to: id)
    }

    func sendError(to id: ConnectionID, re: MessageID?, _ error: ProtocolError) {
        metrics.errorsOut[error.code.rawValue, default: 0] += 1
        enqueue(payload: ServerReplies.error(re: re, error), to: id)
    }

    /// Closes a connection with a WebSocket close code; nothing more is queued to it.
    func closeSession(_ id: ConnectionID, code: CloseCode, reason: String) {
        guard let session = sessions[id], !session.isClosing else { return }
        session.isClosing = true
        session.queue.removeAll()
        host.close(id, code: code.rawValue, reason: reason)
    }

    /// Closes connections whose unsent data stayed over the limit too long (PROTOCOL 7).
    func closeSlowConsumers(now: Int64) {
        for (id, session) in sessions {
            let verdict = sessionPolicy.slowReader(session, now: now)
            if case .close = verdict { metrics.slowConsumerCloses += 1 }
            carryOut(verdict, for: id)
        }
    }

    /// Does what the session policy decided for a connection.
    func carryOut(_ verdict: SessionPolicy.Verdict, for id: ConnectionID) {
        switch verdict {
        case .keep: break
        case .ping: _ = host.ping(id)
        case .drop: host.drop(id)
        case .close(let code, let reason): closeSession(id, code: code, reason: reason)
        }
    }

    // MARK: - Subscriptions

    func addSubscriber(_ id: ConnectionID, to trip: String, mode: SubscriptionMode) {
        guard let session = sessions[id] else { return }
        subscriptions.add(session, to: trip, mode: mode)
        metrics.subscriptions = subscriptions.count
    }

    /// Ends a subscription. Its queued frames are dropped, unless `keepingQueuedFrames` (a
    /// share link's end at arrival: the last frame, at the destination, must still go out).
    func removeSubscriber(_ id: ConnectionID, from trip: String, keepingQueuedFrames: Bool = false) {
        guard subscriptions.remove(id, session: sessions[id], from: trip) else { return }
        metrics.subscriptions = subscriptions.count
        if !keepingQueuedFrames, let slot = trips[trip]?.slot { sessions[id]?.queue.removeFrames(ofSlot: slot) }
    }

    /// Sends one message to every subscriber of a trip, optionally only those in one mode.
    func broadcast(_ message: OutboundMessage, trip: String, mode: SubscriptionMode? = nil) -> Int {
        guard let followers = subscriptions.followers(of: trip) else { return 0 }
        return broadcast(message, to: followers, mode: mode)
    }

    /// Sends one message to the given followers (the tick passes the ones it already looked up).
    func broadcast(_ message: OutboundMessage, to followers: [ConnectionID: SubscriptionMode], mode: SubscriptionMode?) -> Int {
        var delivered = 0
        for (id, followerMode) in followers where mode == nil || followerMode == mode {
            enqueue(message, to: id)
            delivered += 1
        }
        return delivered
    }
}
