import TrackHubLWS
/// The bounded queue of messages waiting to be written to one connection.
///
/// Reliable messages (replies, events, acks) keep their order and are never dropped. Three
/// kinds make an older waiting message redundant instead of adding to it (PROTOCOL 7):
/// - a frame or segment of a trip, and a `clusters` update, replace the waiting one of the
///   same key *in place* (latest-wins): a slow reader loses intermediate positions, and a
///   frame stays ahead of the events queued after it ("a frame comes before any event it
///   triggers");
/// - a snapshot of a trip, and the first answer to a viewport, take the waiting one of the
///   same key *out* and go to the back: the reader gets the newer reply after everything
///   queued before it, once, carrying the later request's `re`.
/// So a client that repeats the same request without reading holds one answer, not many.
///
/// The bound is on bytes: `unsentBytes` is what the hub compares with `--max-unsent` (and
/// with 4 × that, the hard cap); acting on it is the hub's decision, not the queue's.
struct SendQueue {
    /// What makes a waiting message redundant; nil for reliable ones.
    private enum Key: Hashable {
        case frame(Int)
        case clusters
        case snapshot(String)
        case viewportReply(String)
    }

    private var entries: [OutboundMessage?] = []
    private var head = 0
    /// Absolute position of the waiting message of each key.
    private var waiting: [Key: Int] = [:]
    private var removedBefore = 0

    /// Bytes queued and not yet handed to the socket.
    private(set) var unsentBytes = 0
    /// Frames and cluster updates replaced before they were written (dropped for this reader).
    private(set) var droppedFrames = 0
    /// Snapshots and viewport answers that replaced a waiting one of the same key.
    private(set) var replacedReplies = 0

    var isEmpty: Bool { head == entries.count }
    var count: Int { entries.count - head }

    /// What `push` did with a message.
    enum PushOutcome {
        /// Queued behind everything else.
        case appended
        /// Took the place of a waiting frame or cluster update, which is dropped.
        case replacedFrame
        /// Took over from a waiting snapshot or viewport answer of the same key.
        case replacedReply
    }

    /// Queues a message, replacing a waiting one of the same key (see the type's comment).
    @discardableResult
    mutating func push(_ message: OutboundMessage) -> PushOutcome {
        switch message.kind {
        case .reliable:
            append(message)
            return .appended
        case .frame(let slot):
            return replaceInPlace(.frame(slot), with: message)
        case .clusters:
            return replaceInPlace(.clusters, with: message)
        case .snapshot(let trip):
            return moveToBack(.snapshot(trip), message)
        case .viewportReply(let key):
            return moveToBack(.viewportReply(key), message)
        }
    }

    /// The next message to write, removed from the queue.
    mutating func pop() -> OutboundMessage? {
        while head < entries.count {
            let absolute = removedBefore + head
            let message = entries[head]
            entries[head] = nil
            head += 1
            guard let message else { continue }
            unsentBytes -= message.count
            if let key = Self.key(of: message), waiting[key] == absolute { waiting[key] = nil }
            compactIfWorthIt()
            return message
        }
        return nil
    }

    /// Drops every frame of one trip slot that is still waiting (after an unsubscribe).
    mutating func removeFrames(ofSlot slot: Int) {
        remove(.frame(slot))
    }

    /// Forgets everything (the connection is closing). The storage is released, not kept.
    mutating func removeAll() {
        entries = []
        head = 0
        waiting = [:]
        unsentBytes = 0
    }

    // MARK: - Private

    private static func key(of message: OutboundMessage) -> Key? {
        switch message.kind {
        case .reliable: return nil
        case .frame(let slot): return .frame(slot)
        case .clusters: return .clusters
        case .snapshot(let trip): return .snapshot(trip)
        case .viewportReply(let key): return .viewportReply(key)
        }
    }

    private mutating func replaceInPlace(_ key: Key, with message: OutboundMessage) -> PushOutcome {
        if let position = waiting[key], let old = entries[position - removedBefore] {
            unsentBytes += message.count - old.count
            entries[position - removedBefore] = message
            droppedFrames += 1
            return .replacedFrame
        }
        waiting[key] = removedBefore + entries.count
        append(message)
        return .appended
    }

    private mutating func moveToBack(_ key: Key, _ message: OutboundMessage) -> PushOutcome {
        var outcome = PushOutcome.appended
        if waiting[key] != nil {
            remove(key)
            replacedReplies += 1
            outcome = .replacedReply
        }
        waiting[key] = removedBefore + entries.count
        append(message)
        return outcome
    }

    private mutating func remove(_ key: Key) {
        guard let position = waiting.removeValue(forKey: key) else { return }
        let index = position - removedBefore
        if let old = entries[index] {
            unsentBytes -= old.count
            entries[index] = nil
        }
    }

    private mutating func append(_ message: OutboundMessage) {
        entries.append(message)
        unsentBytes += message.count
    }

    /// Drops the consumed prefix once it is large, so the array does not grow forever.
    private mutating func compactIfWorthIt() {
        if head == entries.count {
            removedBefore += head
            entries.removeAll(keepingCapacity: entries.capacity <= 64)
            head = 0
        } else if head >= 64 && head * 2 >= entries.count {
            removedBefore += head
            entries.removeFirst(head)
            head = 0
        }
    }
}
