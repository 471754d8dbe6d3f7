/// The bounded queue of messages waiting to be written to one connection.
///
/// Reliable messages (replies, snapshots, events, acks) keep their order and are never
/// dropped. A frame or segment of a trip that is still waiting when a newer one of the
/// same trip arrives is replaced in place (latest-wins), and so is a waiting `clusters`
/// update: a slow reader loses intermediate positions, never anything else. Replacing in
/// place keeps a frame ahead of the events queued after it ("a frame comes before any
/// event it triggers").
///
/// The bound is on bytes: `unsentBytes` is what the hub compares with `--max-unsent`;
/// past it for long enough, the connection is closed (the hub's decision, not the queue's).
/// Entries are also bounded in number by `maxEntries`: past it, the connection is
/// treated as over its limit too.
struct SendQueue {
    private var entries: [OutboundMessage?] = []
    private var head = 0
    /// Position (absolute index) of the waiting frame of each trip slot.
    private var waitingFrame: [Int: Int] = [:]
    private var waitingClusters: Int?
    private var removedBefore = 0

    /// Bytes queued and not yet handed to the socket.
    private(set) var unsentBytes = 0
    /// Frames replaced before they were written (dropped for this reader).
    private(set) var droppedFrames = 0

    var isEmpty: Bool { head == entries.count }
    var count: Int { entries.count - head }

    /// Queues a message; frames and clusters replace a waiting one of the same key.
    /// Returns true when an older frame was replaced (dropped).
    @discardableResult
    mutating func push(_ message: OutboundMessage) -> Bool {
        switch message.kind {
        case .reliable:
            append(message)
            return false
        case .frame(let slot):
            if let position = waitingFrame[slot], let old = entries[position - removedBefore] {
                unsentBytes += message.count - old.count
                entries[position - removedBefore] = message
                droppedFrames += 1
                return true
            }
            waitingFrame[slot] = removedBefore + entries.count
            append(message)
            return false
        case .clusters:
            if let position = waitingClusters, let old = entries[position - removedBefore] {
                unsentBytes += message.count - old.count
                entries[position - removedBefore] = message
                droppedFrames += 1
                return true
            }
            waitingClusters = removedBefore + entries.count
            append(message)
            return false
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
            switch message.kind {
            case .frame(let slot):
                if waitingFrame[slot] == absolute { waitingFrame[slot] = nil }
            case .clusters:
                if waitingClusters == absolute { waitingClusters = nil }
            case .reliable:
                break
            }
            compactIfWorthIt()
            return message
        }
        return nil
    }

    /// Drops every frame of one trip slot that is still waiting (after an unsubscribe).
    mutating func removeFrames(ofSlot slot: Int) {
        guard let position = waitingFrame.removeValue(forKey: slot) else { return }
        let index = position - removedBefore
        if let old = entries[index] {
            unsentBytes -= old.count
            entries[index] = nil
        }
    }

    /// Forgets everything (the connection is closing).
    mutating func removeAll() {
        entries.removeAll()
        head = 0
        waitingFrame.removeAll()
        waitingClusters = nil
        unsentBytes = 0
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
