import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Delivery: the open WebSocket sessions, who follows which trip, and every write to them.
/// The one place a message is handed to a socket or queued for it (latest-wins frames,
/// replies that replace their own kind, the unsent-data limits of PROTOCOL 7), so the rest of
/// the hub decides *what* to send and this decides *how*.
///
/// It works against `any ServerHost` alone: libwebsockets in the hub, `FakeServerHost` in
/// socketless tests. Modelled on lws's ring-buffer fan-out example and Centrifuge's `Hub`:
/// one map of sessions, one of subscribers per channel, and a write path that never blocks.
///
/// Threads: the service thread only (the host calls back on it; the hub calls in on it).
/// Bounds: one session per open WebSocket; `Subscriptions` at most `--max-subscriptions` a
/// session (checked by the caller); each session's queue by `SessionPolicy`'s limits.
final class Fanout {
    /// Open WebSocket sessions by connection. `Session` is a class: the hub reads and sets a
    /// session's own fields (its grants, viewport, counters) through this map.
    private(set) var sessions: [ConnectionID: Session] = [:]
    /// Who follows which trip, both ways.
    private(set) var subscriptions = Subscriptions()
    /// What `/metrics` shows of delivery.
    var counters = DeliveryCounters()
    /// Told when a trip gains its first follower from a connection or loses one (a subscribe,
    /// an unsubscribe, a close, a narrower token, a share link's end), and when a stop link
    /// starts or stops showing the courier (`StopLinkFollower.wasShown`: a link the courier is
    /// hidden from watches nothing, PROTOCOL 18): who watches a trip decides how often its
    /// courier is asked for fixes (`CadenceService`). Called after the change, on the service
    /// thread.
    var followersChanged: ((_ trip: String) -> Void)?
    /// A subscription to `trip` that takes frames (or a link for one stop) was made: a trip
    /// that dozed because nobody took its frames must tick again (`TickSchedule.doze`).
    var framesWanted: ((_ trip: String) -> Void)?
    /// Told when a session has gone, after its subscriptions went (each told above).
    var sessionRemoved: ((_ id: ConnectionID) -> Void)?

    private let host: any ServerHost
    private let policy: SessionPolicy
    private let clock: HubClock

    init(host: any ServerHost, policy: SessionPolicy, clock: HubClock) {
        self.host = host
        self.policy = policy
        self.clock = clock
    }

    /// The session of an open WebSocket.
    subscript(id: ConnectionID) -> Session? { sessions[id] }

    /// Open WebSocket sessions.
    var count: Int { sessions.count }

    /// Bytes queued for every connection and not yet handed to the kernel.
    var unsentBytes: Int { sessions.values.reduce(0) { $0 + $1.queue.unsentBytes } }

    /// True while some open connection still has messages to write (the drain waits for them).
    var hasUnsentMessages: Bool { sessions.values.contains { !$0.isClosing && !$0.queue.isEmpty } }

    // MARK: - Sessions

    /// An upgrade became an open WebSocket.
    func open(_ session: Session) {
        sessions[session.id] = session
        counters.connectionsOpened += 1
        counters.connectionsOpen += 1
    }

    /// A connection closed: its session and every subscription it held go (their queued
    /// frames with them). Returns the session, for the log line and what else it held.
    func remove(_ id: ConnectionID) -> Session? {
        guard let session = sessions.removeValue(forKey: id) else { return nil }
        counters.connectionsOpen -= 1
        for trip in Array(session.subscriptions.keys) {
            subscriptions.remove(id, session: session, from: trip)
            followersChanged?(trip)
        }
        sessionRemoved?(id)
        return session
    }

    // MARK: - Writing

    /// The socket can take one more message: the next queued one, and whether more wait.
    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)? {
        guard let session = sessions[id] else { return nil }
        session.awaitingWritable = false
        guard let message = session.queue.pop() else { return nil }
        policy.afterWriting(session)
        let hasMore = session.queue.hasMessageToWrite  // not when stopped at a reservation
        if hasMore { session.awaitingWritable = true }
        counted(message, session)
        return (message, hasMore)
    }

    /// Sends one message to a connection: written at once when nothing waits before it and
    /// the socket takes it, else queued (latest-wins for frames) with a writeable callback
    /// asked for; past the unsent-data cap the connection is closed (PROTOCOL 7).
    func enqueue(_ message: OutboundMessage, to id: ConnectionID) {
        guard let session = sessions[id], !session.isClosing else { return }
        if session.queue.isEmpty && !session.awaitingWritable {
            switch host.writeNow(id, message) {
            case .written:
                counted(message, session)
                return
            case .failed:
                return  // lws closes it; the hub hears connectionClosed and calls `remove`
            case .mustQueue:
                break
            }
        }
        switch session.queue.push(message) {
        case .appended: break
        case .replacedFrame: counters.framesDropped += 1
        case .replacedReply: counters.repliesReplaced += 1
        }
        if closeIfOverTheCap(session) { return }
        let needsWritable = !session.awaitingWritable
        session.awaitingWritable = true
        if needsWritable { host.requestWritable(id) }
    }

    /// Queues a payload without headroom (small replies).
    func enqueue(payload: [UInt8], to id: ConnectionID) {
        enqueue(OutboundMessage(payload: payload), to: id)
    }

    /// Puts the messages read for a reservation in its place, then writes as `enqueue` does
    /// (a reservation replaced meanwhile, or a closed connection: they are dropped).
    func fillReservation(_ ticket: UInt64, with messages: [OutboundMessage], for id: ConnectionID) {
        guard let session = sessions[id], !session.isClosing, session.queue.fill(ticket, with: messages) else { return }
        if closeIfOverTheCap(session) { return }
        if !session.awaitingWritable {
            session.awaitingWritable = true
            host.requestWritable(id)
        }
    }

    /// Sends one message to every follower of a trip, or only those in `mode`, except links for
    /// one stop; returns how many it went to. With a `mode` (a frame or segment) a stop follower (PROTOCOL 17) gets
    /// `perStop`'s message for its stop instead, when there is one.
    func broadcast(
        _ message: OutboundMessage, trip: String, mode: SubscriptionMode? = nil, perStop: [StopRef: OutboundMessage] = [:]
    ) -> Int {
        guard let followers = subscriptions.followers(of: trip) else { return 0 }
        return broadcast(message, to: followers, mode: mode, trip: trip, perStop: perStop)
    }

    /// Sends one message to the given followers (the tick passes the ones it already looked
    /// up); stop followers in `mode` get `perStop`'s message for their stop when there is one.
    func broadcast(
        _ message: OutboundMessage, to followers: [ConnectionID: SubscriptionMode], mode: SubscriptionMode?,
        trip: String, perStop: [StopRef: OutboundMessage] = [:]
    ) -> Int {
        let stops = mode == nil || perStop.isEmpty ? nil : subscriptions.stopFollowers(of: trip)
        // Links for one stop get only what StopLinkFanout decides (PROTOCOL 17).
        let links = subscriptions.links(of: trip)
        var delivered = 0
        for (id, followerMode) in followers where mode == nil || followerMode == mode {
            if let links, links[id] != nil { continue }
            if let stop = stops?[id], let own = perStop[stop] {
                enqueue(own, to: id)
            } else {
                enqueue(message, to: id)
            }
            delivered += 1
        }
        return delivered
    }

    private func counted(_ message: OutboundMessage, _ session: Session) {
        counters.messagesOut += 1
        counters.bytesOut += message.count
        session.messagesOut += 1
    }

    /// PROTOCOL 7: unsent data over 4 × `--max-unsent` closes the connection at once.
    private func closeIfOverTheCap(_ session: Session) -> Bool {
        guard case .close(let code, let reason) = policy.afterQueueing(session, now: clock.wallMillis()) else { return false }
        counters.slowConsumerCloses += 1
        counters.unsentCapCloses += 1
        close(session.id, code: code, reason: reason)
        return true
    }

    // MARK: - Closing and the session rules

    /// Closes a connection with a WebSocket close code; nothing more is queued to it.
    func close(_ id: ConnectionID, code: CloseCode, reason: String) {
        guard let session = sessions[id], !session.isClosing else { return }
        session.isClosing = true
        session.queue.removeAll()
        host.close(id, code: code.rawValue, reason: reason)
    }

    /// Closes the connections whose unsent data stayed over the limit too long (PROTOCOL 7).
    func closeSlowReaders(now: Int64) {
        for (id, session) in sessions {
            let verdict = policy.slowReader(session, now: now)
            if case .close = verdict { counters.slowConsumerCloses += 1 }
            carryOut(verdict, for: id)
        }
    }

    /// Pings, and drops connections that answered neither of the last two pings (PROTOCOL 1).
    func sweepKeepalive(now: Int64) {
        for (id, session) in sessions {
            carryOut(policy.keepalive(session, now: now), for: id)
        }
    }

    /// A pong came back.
    func answeredPing(_ id: ConnectionID) {
        sessions[id]?.unansweredPings = 0
    }

    /// Does what the session policy decided for a connection.
    func carryOut(_ verdict: SessionPolicy.Verdict, for id: ConnectionID) {
        switch verdict {
        case .keep: break
        case .ping: _ = host.ping(id)
        case .drop: host.drop(id)
        case .close(let code, let reason): close(id, code: code, reason: reason)
        }
    }

    // MARK: - Subscriptions

    /// Subscribes a connection to a trip (or changes its mode), following `stop` only when
    /// given (PROTOCOL 17); `link` when the subscription is a link for that stop.
    func subscribe(_ id: ConnectionID, to trip: String, mode: SubscriptionMode, stop: StopRef? = nil, link: StopLinkFollower? = nil) {
        guard let session = sessions[id] else { return }
        let watchedBefore = subscriptions.watchesCourier(id, trip: trip)
        let isNew = subscriptions.add(session, to: trip, mode: mode, stop: stop, link: link)
        if mode == .frames || link != nil { framesWanted?(trip) }
        if isNew || subscriptions.watchesCourier(id, trip: trip) != watchedBefore { followersChanged?(trip) }
    }

    /// Keeps what a stop link was told (the state `StopLinkFanout` decided with); when that
    /// changed whether it sees the courier, `followersChanged` (its courier's cadence may too).
    func updateLink(_ link: StopLinkFollower, for id: ConnectionID, trip: String) {
        let watchedBefore = subscriptions.watchesCourier(id, trip: trip)
        subscriptions.updateLink(link, for: id, trip: trip)
        if subscriptions.watchesCourier(id, trip: trip) != watchedBefore { followersChanged?(trip) }
    }

    /// Ends a subscription. Its queued frames (of the trip's `slot`) are dropped, unless
    /// `keepingQueuedFrames` (a share link's end at arrival: the last frame, at the
    /// destination, must still go out).
    func unsubscribe(_ id: ConnectionID, from trip: String, slot: Int?, keepingQueuedFrames: Bool = false) {
        guard subscriptions.remove(id, session: sessions[id], from: trip) else { return }
        if !keepingQueuedFrames, let slot { sessions[id]?.queue.removeFrames(ofSlot: slot) }
        followersChanged?(trip)
    }
}

/// The delivery counters of `/metrics` (PROTOCOL 14), kept by `Fanout`.
struct DeliveryCounters {
    /// WebSocket connections accepted.
    var connectionsOpened = 0
    /// WebSocket connections open now.
    var connectionsOpen = 0
    /// Messages handed to sockets, and their payload bytes.
    var messagesOut = 0
    var bytesOut = 0
    /// Frames replaced before a slow reader took them (latest-wins).
    var framesDropped = 0
    /// Snapshots and viewport answers that took over from a waiting one of the same key.
    var repliesReplaced = 0
    /// Closes with 1008 for unsent data over the limit, and the subset closed at once for
    /// unsent data over 4 × the limit.
    var slowConsumerCloses = 0
    var unsentCapCloses = 0
}
