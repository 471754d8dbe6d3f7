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
/// A snapshot whose trail is still being read from the store holds its place (`reserve`):
/// nothing behind it is written until it is filled (`fill`), so the events and frames of the
/// trip sent meanwhile still come after it, and a newer request of the same trip replaces
/// the reservation as it would a waiting snapshot (the late fill of the old one is ignored).
///
/// The bound is on bytes: `unsentBytes` is what the hub compares with `--max-unsent` (and
/// with 4 × that, the hard cap); acting on it is the hub's decision, not the queue's.
struct SendQueue {
    /// What makes a waiting message redundant; nil for reliable ones.
    private enum Key: Hashable {
        case frame(Int)
        case clusters
        case snapshot(String)
        /// A subscribe's answer (its `re`, recovery and replay): a snapshot sent to every
        /// subscriber never takes its place, it queues behind it.
        case snapshotReply(String)
        case viewportReply(String)
    }

    /// One place in the queue.
    private enum Slot {
        /// Written, or replaced by a newer message of its key.
        case empty
        case message(OutboundMessage)
        /// Held for answers still being read (a ticket from `reserve`), under a key.
        case reserved(UInt64, Key)
        /// A filled reservation: its messages, written in order; the key it was held under
        /// is released when the first goes out (the rest, replayed events, are never replaced).
        case messages(ArraySlice<OutboundMessage>, Key)
    }

    private var entries: [Slot] = []
    /// Where each unfilled reservation is (absolute position), by ticket.
    private var reservations: [UInt64: Int] = [:]
    private var nextTicket: UInt64 = 1
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

    /// Nothing is queued or reserved.
    var isEmpty: Bool { head == entries.count }
    var count: Int { entries.count - head }

    /// Whether `pop` would give a message now (not stopped at a reservation).
    var hasMessageToWrite: Bool {
        if reservations.isEmpty { return !isEmpty }
        var index = head
        while index < entries.count {
            switch entries[index] {
            case .empty: index += 1
            case .reserved: return false
            case .message, .messages: return true
            }
        }
        return false
    }

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

    /// The next message to write, removed from the queue (nil: none, or the next place is
    /// a reservation not yet filled).
    mutating func pop() -> OutboundMessage? {
        while head < entries.count {
            let absolute = removedBefore + head
            switch entries[head] {
            case .empty:
                head += 1
            case .reserved:
                return nil
            case .message(let message):
                entries[head] = .empty
                head += 1
                unsentBytes -= message.count
                if let key = Self.key(of: message), waiting[key] == absolute { waiting[key] = nil }
                compactIfWorthIt()
                return message
            case .messages(var rest, let key):
                let message = rest.removeFirst()
                unsentBytes -= message.count
                if waiting[key] == absolute { waiting[key] = nil }
                if rest.isEmpty {
                    entries[head] = .empty
                    head += 1
                    compactIfWorthIt()
                } else {
                    entries[head] = .messages(rest, key)
                }
                return message
            }
        }
        return nil
    }

    /// Holds a place for a snapshot of `trip` and what goes with it, still to be read. The
    /// ticket names it for `fill`. A subscribe's answer (`reply`) replaces a waiting snapshot
    /// of that trip and an older subscribe's answer; a snapshot for every subscriber replaces
    /// only a waiting one of its kind, never an answer (whose `re` and replayed events must
    /// reach the client), and goes behind it.
    mutating func reserveSnapshot(of trip: String, reply: Bool = true) -> (ticket: UInt64, outcome: PushOutcome) {
        let key = reply ? Key.snapshotReply(trip) : Key.snapshot(trip)
        var outcome = PushOutcome.appended
        for replaced in reply ? [Key.snapshotReply(trip), .snapshot(trip)] : [.snapshot(trip)] where waiting[replaced] != nil {
            remove(replaced)
            replacedReplies += 1
            outcome = .replacedReply
        }
        let ticket = nextTicket
        nextTicket += 1
        waiting[key] = removedBefore + entries.count
        reservations[ticket] = removedBefore + entries.count
        entries.append(.reserved(ticket, key))
        return (ticket, outcome)
    }

    /// Puts the messages read for a reservation in its place (the snapshot first). False when
    /// the reservation is gone (replaced by a newer one, or the queue was emptied).
    mutating func fill(_ ticket: UInt64, with messages: [OutboundMessage]) -> Bool {
        guard let position = reservations.removeValue(forKey: ticket) else { return false }
        let index = position - removedBefore
        guard case .reserved(_, let key) = entries[index] else { return false }
        if messages.isEmpty {
            entries[index] = .empty
            if waiting[key] == position { waiting[key] = nil }
        } else {
            entries[index] = .messages(messages[...], key)
            unsentBytes += messages.reduce(0) { $0 + $1.count }
        }
        return true
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
        reservations = [:]
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
        if let position = waiting[key], case .message(let old) = entries[position - removedBefore] {
            unsentBytes += message.count - old.count
            entries[position - removedBefore] = .message(message)
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
        switch entries[index] {
        case .empty: break
        case .message(let old): unsentBytes -= old.count
        case .messages(let rest, _): unsentBytes -= rest.reduce(0) { $0 + $1.count }
        case .reserved(let ticket, _): reservations[ticket] = nil
        }
        entries[index] = .empty
    }

    private mutating func append(_ message: OutboundMessage) {
        entries.append(.message(message))
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
