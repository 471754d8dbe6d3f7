import TrackHubProtocol

/// What is still to deliver to one webhook URL, and what to send next (PROTOCOL 12). Pure: the
/// dispatcher performs the requests, reads the store when asked (`fetch`) and reports back;
/// time is given (ms).
///
/// Order: for each trip, event `n` is sent only once every event before it is done
/// (delivered, skipped by `--webhook-events`, or dropped), so a receiver sees a trip's
/// events in order; different trips go out side by side, at most `maxInFlight` at once.
///
/// Bounds: at most `maxLoaded` event bodies are held for the URL. An event stored while the
/// URL is that far behind is not held: its trip's cursor only remembers that there is more
/// (`last`), and the bodies are read back from the store's event log, in order, once the
/// cursor gets to them. So a dead receiver costs a cursor per trip with undelivered events
/// (bounded by the trips the store keeps) and `maxLoaded` bodies; nothing is dropped at the
/// limit, only by the 24 h rule.
struct WebhookQueue {
    struct Limits: Sendable {
        /// Event bodies held in memory for one URL.
        var maxLoaded = 10_000
        /// Requests to the URL at once (each for a different trip).
        var maxInFlight = 16
        /// Events read from the store at once for one trip.
        var fetchBatch = 100
    }

    /// One request to make.
    struct Delivery: Sendable {
        var trip: String
        var payload: WebhookPayload
        /// 1 for the first attempt.
        var attempt: Int
    }

    enum Outcome: Equatable {
        /// A 2xx answer within the timeout.
        case delivered
        /// Anything else; `status` 0 when there was no answer.
        case failed(status: Int)
    }

    /// What `finished` did with the event, for counting and logging.
    enum Verdict: Equatable {
        case delivered
        case retryAt(Int64)
        case dropped
        /// No request was under way for the trip (a stale answer): nothing changed.
        case ignored
    }

    private struct Entry {
        var payload: WebhookPayload
        /// When the event was queued (ms): the 24 h are counted from here.
        var queuedAt: Int64
    }

    /// One trip's place in the URL's stream of events.
    private struct Cursor {
        /// Every event up to this `n` is done.
        var done: Int
        /// The trip's last event known.
        var last: Int
        /// Events `done + 1 ...` held in memory, in order, without gaps.
        var loaded: [Entry] = []
        var loadedStart = 0  // index of the head in `loaded` (popping without moving the rest)
        var inFlight = false
        var failures = 0
        var retryAt: Int64?
        var isReady = false
        /// Since when the oldest undelivered event waits, when it is not loaded.
        var waitingSince: Int64

        var head: Entry? { loadedStart < loaded.count ? loaded[loadedStart] : nil }
        var loadedCount: Int { loaded.count - loadedStart }
        var hasWork: Bool { done < last }

        mutating func popHead() {
            loadedStart += 1
            if loadedStart >= 64 && loadedStart * 2 >= loaded.count {
                loaded.removeFirst(loadedStart)
                loadedStart = 0
            }
        }
    }

    let url: String
    /// `--webhook-events`: nil for every event.
    let eventNames: Set<String>?
    let backoff: WebhookBackoff
    let limits: Limits

    private var cursors: [String: Cursor] = [:]
    /// Positions of trips with nothing to do (so a cursor is only kept while there is work).
    private var idleDone: [String: Int] = [:]
    private var ready: [String] = []
    private var readyStart = 0
    private var retrying: Set<String> = []
    private var nextRetryAt: Int64 = .max
    private var loadedTotal = 0
    private(set) var inFlight = 0
    /// Events known and not yet done, over all trips.
    private(set) var pending = 0
    private(set) var delivered = 0
    private(set) var failed = 0
    private(set) var dropped = 0
    /// Positions moved since `takeDirtyPositions`.
    private var dirty: [String: Int] = [:]

    init(url: String, eventNames: Set<String>?, backoff: WebhookBackoff, limits: Limits = Limits(), positions: [String: Int] = [:]) {
        self.url = url
        self.eventNames = eventNames
        self.backoff = backoff
        self.limits = limits
        self.idleDone = positions
    }

    /// Loaded bodies, for tests of the bound.
    var loadedCount: Int { loadedTotal }

    /// A trip's position: every event up to it is done.
    func position(of trip: String) -> Int { cursors[trip]?.done ?? idleDone[trip] ?? 0 }

    /// The trip has events up to `last` in the store (start-up, or after an overflow): the
    /// ones after its position are read from the store when their turn comes.
    mutating func knowEvents(trip: String, upTo last: Int, now: Int64) {
        eventStored(trip: trip, n: last, payload: nil, now: now)
    }

    /// A new event of `trip` is durably stored; `payload` nil: not held (read back later).
    mutating func eventStored(trip: String, n: Int, payload: WebhookPayload?, now: Int64) {
        var cursor = cursors.removeValue(forKey: trip) ?? {
            let done = idleDone.removeValue(forKey: trip) ?? 0
            return Cursor(done: done, last: done, waitingSince: now)
        }()
        defer { cursors[trip] = cursor; settle(trip) }
        guard n > cursor.last else { return }
        if !cursor.hasWork { cursor.waitingSince = now }
        let contiguous = cursor.done + cursor.loadedCount == cursor.last && n == cursor.last + 1
        if contiguous, let payload, loadedTotal < limits.maxLoaded {
            cursor.loaded.append(Entry(payload: payload, queuedAt: now))
            loadedTotal += 1
        }
        pending += n - cursor.last
        cursor.last = n
    }

    /// The trip is gone from the store (retention): forgets its position and what was still
    /// to send of it. A trip whose event is being sent right then keeps its cursor (the
    /// trip ended `--retain-days` ago, so only a receiver failing all that time gets here).
    mutating func forget(trip: String) {
        idleDone[trip] = nil
        dirty[trip] = nil
        guard let cursor = cursors[trip], !cursor.inFlight else { return }
        pending -= cursor.last - cursor.done
        loadedTotal -= cursor.loadedCount
        cursors[trip] = nil
        retrying.remove(trip)
    }

    /// The next requests to make, at most `maxInFlight` at once. Skipped events are passed
    /// over here; `fetch(trip, after, limit)` reads stored events (nil: the read failed).
    mutating func nextDeliveries(now: Int64, fetch: (String, Int, Int) -> [[UInt8]]?) -> [Delivery] {
        if now >= nextRetryAt { wakeRetries(now: now) }
        var out: [Delivery] = []
        while inFlight < limits.maxInFlight, readyStart < ready.count {
            let trip = ready[readyStart]
            readyStart += 1
            guard var cursor = cursors.removeValue(forKey: trip) else { continue }
            cursor.isReady = false
            if let delivery = take(&cursor, trip: trip, now: now, fetch: fetch) {
                cursor.inFlight = true
                inFlight += 1
                out.append(delivery)
            }
            cursors[trip] = cursor
            settle(trip)
        }
        if readyStart > 1024 && readyStart * 2 > ready.count {
            ready.removeFirst(readyStart)
            readyStart = 0
        }
        return out
    }

    /// The head event of the cursor to send, after passing over skipped ones and reading
    /// from the store what is not loaded.
    private mutating func take(_ cursor: inout Cursor, trip: String, now: Int64, fetch: (String, Int, Int) -> [[UInt8]]?) -> Delivery? {
        while cursor.hasWork {
            if cursor.head == nil {
                guard let bodies = fetch(trip, cursor.done, min(limits.fetchBatch, cursor.last - cursor.done)) else {
                    scheduleRetry(&cursor, trip: trip, at: now + backoff.baseMs)
                    return nil
                }
                if bodies.isEmpty {
                    // The events are gone from the store (the trip was deleted): nothing to send.
                    advance(&cursor, trip: trip, to: cursor.last)
                    return nil
                }
                var expected = cursor.done + 1
                for body in bodies {
                    guard let payload = try? WebhookPayload(storedEvent: body), payload.n >= expected else { continue }
                    // The 24 h count from the event's time, never from the future nor from
                    // more than 24 h ago (a restart must not forget how long it waited).
                    let queuedAt = min(now, max(payload.t, cursor.waitingSince, now - backoff.giveUpAfterMs))
                    if payload.n > expected {
                        // A gap (an event that cannot be read): passed over, but only before
                        // anything is loaded, so the position never jumps a loaded event.
                        if cursor.head != nil { break }
                        advance(&cursor, trip: trip, to: payload.n - 1)
                    }
                    cursor.loaded.append(Entry(payload: payload, queuedAt: queuedAt))
                    loadedTotal += 1
                    expected = payload.n + 1
                }
                if cursor.head == nil {
                    advance(&cursor, trip: trip, to: min(cursor.last, expected - 1 + bodies.count))
                    continue
                }
            }
            guard let head = cursor.head else { continue }
            if let names = eventNames, !names.contains(head.payload.eventName) {
                cursor.popHead()
                loadedTotal -= 1
                advance(&cursor, trip: trip, to: head.payload.n)
                continue
            }
            return Delivery(trip: trip, payload: head.payload, attempt: cursor.failures + 1)
        }
        return nil
    }

    /// The request for `trip`'s head event ended.
    mutating func finished(trip: String, outcome: Outcome, now: Int64) -> Verdict {
        guard let found = cursors[trip], found.inFlight, let head = found.head else { return .ignored }
        var cursor = found
        cursors[trip] = nil
        defer { cursors[trip] = cursor; settle(trip) }
        cursor.inFlight = false
        inFlight -= 1
        switch outcome {
        case .delivered:
            delivered += 1
            cursor.failures = 0
            cursor.popHead()
            loadedTotal -= 1
            advance(&cursor, trip: trip, to: head.payload.n)
            return .delivered
        case .failed:
            failed += 1
            cursor.failures += 1
            if backoff.isExpired(queuedAt: head.queuedAt, now: now) {
                dropped += 1
                cursor.failures = 0
                cursor.popHead()
                loadedTotal -= 1
                advance(&cursor, trip: trip, to: head.payload.n)
                return .dropped
            }
            let at = now + backoff.delayMs(afterFailures: cursor.failures)
            scheduleRetry(&cursor, trip: trip, at: at)
            return .retryAt(at)
        }
    }

    private mutating func scheduleRetry(_ cursor: inout Cursor, trip: String, at: Int64) {
        cursor.retryAt = at
        retrying.insert(trip)
        nextRetryAt = min(nextRetryAt, at)
    }

    private mutating func advance(_ cursor: inout Cursor, trip: String, to n: Int) {
        guard n > cursor.done else { return }
        pending -= min(n, cursor.last) - cursor.done
        cursor.done = n
        cursor.waitingSince = max(cursor.waitingSince, cursor.head?.queuedAt ?? cursor.waitingSince)
        dirty[trip] = n
    }

    private mutating func wakeRetries(now: Int64) {
        var next = Int64.max
        for trip in retrying {
            guard let at = cursors[trip]?.retryAt else { retrying.remove(trip); continue }
            if at <= now {
                cursors[trip]?.retryAt = nil
                retrying.remove(trip)
                settle(trip)
            } else {
                next = min(next, at)
            }
        }
        nextRetryAt = next
    }

    /// Puts the trip in line when it has work and nothing stops it; forgets an idle cursor.
    private mutating func settle(_ trip: String) {
        guard var cursor = cursors[trip] else { return }
        if !cursor.hasWork && !cursor.inFlight {
            cursors[trip] = nil
            idleDone[trip] = cursor.done
            return
        }
        if cursor.hasWork && !cursor.inFlight && cursor.retryAt == nil && !cursor.isReady {
            cursor.isReady = true
            cursors[trip] = cursor
            ready.append(trip)
        }
    }

    /// When `nextDeliveries` next has something to do by time alone (a retry), or nil.
    func nextWake() -> Int64? { nextRetryAt == .max ? nil : nextRetryAt }

    /// Whether a call to `nextDeliveries` now could start a request.
    var hasReadyWork: Bool { readyStart < ready.count && inFlight < limits.maxInFlight }

    /// How long the oldest undelivered event has waited (ms), 0 with none.
    func oldestPendingMs(now: Int64) -> Int64 {
        var oldest = now
        for cursor in cursors.values where cursor.hasWork {
            oldest = min(oldest, cursor.head?.queuedAt ?? cursor.waitingSince)
        }
        return now - oldest
    }

    /// The positions moved since the last call, to be stored.
    mutating func takeDirtyPositions() -> [String: Int] {
        defer { dirty.removeAll(keepingCapacity: true) }
        return dirty
    }

    /// Positions whose store write failed: written again with the next ones.
    mutating func restoreDirty(_ positions: [String: Int]) {
        for (trip, n) in positions where (dirty[trip] ?? 0) < n { dirty[trip] = n }
    }
}
