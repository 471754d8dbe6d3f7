import Dispatch
import Foundation
import Synchronization
import TrackHubProtocol
import TrackHubStore

/// Delivers trip events to the webhook URLs (PROTOCOL 12) on a thread of its own, with
/// libcurl's multi interface: nothing here runs on the hub's service thread but
/// `eventsStored` (a short locked append) and `metricsText` (a locked read).
///
/// Each URL has its own `WebhookQueue` (the decisions: what to send, when to retry); a slow
/// or dead receiver only fills its own queue's request slots, so it never holds up another
/// URL, a fix ack or a frame.
///
/// Durability: the events are already in the store's event log when they get here; what is
/// kept per URL is how far each trip has been delivered (`WebhookRecord.position`), written
/// through the store's ordinary batches at most every `positionFlushMs`. After a crash the
/// events after the stored positions are sent again, with the same `webhook-id`: at least once.
///
/// Threads: `queues`, `tokens` and `curl` (but its `wake`) belong to the dispatcher thread;
/// `inbox` and `published` are the only state shared, each behind a `Mutex`. That is why the
/// class is `@unchecked Sendable`.
final class WebhookDispatcher: @unchecked Sendable {
    /// Events handed in and not yet taken by the thread, at most; past it only each trip's
    /// highest `n` is kept and the bodies are read back from the store.
    static let maxInbox = 100_000
    static let positionFlushMs: Int64 = 200
    static let metricsEveryMs: Int64 = 250

    private struct Inbox {
        var events: [(trip: String, n: Int, body: [UInt8])] = []
        var overflow: [String: Int] = [:]
        /// Trips deleted (retention); taken before the events, which were all handed in later.
        var forgotten: [String] = []
        var unstored: [(queue: Int, positions: [String: Int])] = []
        var stopping = false
    }

    private struct Published {
        var text = ""
    }

    let settings: WebhookSettings
    private let store: TripStore
    private let curl: CurlMulti
    private let inbox = Mutex(Inbox())
    private let published = Mutex(Published())
    private let stopped = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    private var queues: [WebhookQueue] = []
    private var tokens: [Int: (queue: Int, trip: String)] = [:]
    private var nextToken = 1
    private let limits: WebhookQueue.Limits

    init(settings: WebhookSettings, store: TripStore, limits: WebhookQueue.Limits = WebhookQueue.Limits()) throws(WebhookError) {
        self.settings = settings
        self.store = store
        self.limits = limits
        curl = try CurlMulti(perHost: limits.maxInFlight, total: limits.maxInFlight * max(1, settings.urls.count))
    }

    /// Reads the stored positions, starts the URLs seen for the first time at each trip's last
    /// event, and starts the thread. `lastEvents`: every trip's last event `n`, as restored.
    func start(lastEvents: [String: Int]) throws(WebhookError) {
        let state: WebhookStoredState
        do {
            state = try (store as? WebhookPositionStore)?.loadWebhookState() ?? WebhookStoredState()
        } catch {
            throw .store("cannot read the delivery positions: \(error)")
        }
        let now = wallClockMillis()
        var records: [StoreRecord] = []
        let backoff = WebhookBackoff(baseMs: settings.retryBaseMs)
        for url in settings.urls {
            var positions = state.positions[url] ?? [:]
            if state.targets[url] == nil {
                // A new receiver gets what happens from now on, not the history.
                positions = lastEvents
                records.append(.webhook(.target(url: url, addedAt: now, positions: lastEvents)))
            }
            var queue = WebhookQueue(url: url, eventNames: settings.eventNames, backoff: backoff, limits: limits, positions: positions)
            for (trip, last) in lastEvents where last > (positions[trip] ?? 0) {
                queue.knowEvents(trip: trip, upTo: last, now: now)
            }
            queues.append(queue)
        }
        let gone = Set(state.positions.values.flatMap(\.keys)).subtracting(lastEvents.keys)
        records += gone.sorted().map { .webhook(.forgetTrip(trip: $0)) }
        if !records.isEmpty { store.append(records) { _ in } }
        publishMetrics(now: now)
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-webhooks"
        started.store(true, ordering: .relaxed)
        thread.start()
    }

    /// Stored events of a trip, in `n` order (from the service thread, after the commit).
    func eventsStored(_ events: [(n: Int, payload: [UInt8])], trip: String) {
        let wasEmpty = inbox.withLock { box -> Bool in
            let wasEmpty = box.events.isEmpty && box.overflow.isEmpty
            for event in events {
                if box.events.count < Self.maxInbox {
                    box.events.append((trip, event.n, event.payload))
                } else {
                    box.overflow[trip] = max(box.overflow[trip] ?? 0, event.n)
                }
            }
            return wasEmpty
        }
        if wasEmpty { curl.wake() }
    }

    /// Trips deleted by retention (from the service thread).
    func tripsForgotten(_ ids: [String]) {
        inbox.withLock { $0.forgotten += ids }
        curl.wake()
    }

    /// The `/metrics` lines (as of at most `metricsEveryMs` ago).
    func metricsText() -> String {
        published.withLock { $0.text }
    }

    /// Stops the thread after storing the positions reached. Requests under way are
    /// abandoned: they are sent again after the next start.
    func stop() {
        guard started.exchange(false, ordering: .relaxed) else { return }
        inbox.withLock { $0.stopping = true }
        curl.wake()
        stopped.wait()
    }

    // MARK: - The dispatcher thread

    private func run() {
        var nextFlush = wallClockMillis() + Self.positionFlushMs
        var nextMetrics = wallClockMillis() + Self.metricsEveryMs
        while true {
            let taken = inbox.withLock { box -> Inbox in
                let taken = box
                box.events.removeAll(keepingCapacity: true)
                box.overflow.removeAll(keepingCapacity: true)
                box.forgotten.removeAll()
                box.unstored.removeAll()
                return taken
            }
            var now = wallClockMillis()
            for (index, positions) in taken.unstored { queues[index].restoreDirty(positions) }
            if taken.stopping {
                flushPositions()
                break
            }
            take(taken, now: now)
            startDeliveries(now: now)
            let timeout = pollTimeout(now: now, until: min(nextFlush, nextMetrics))
            let done = curl.poll(timeoutMs: timeout)
            now = wallClockMillis()
            for result in done { finish(result, now: now) }
            if now >= nextFlush {
                flushPositions()
                nextFlush = now + Self.positionFlushMs
            }
            if now >= nextMetrics {
                publishMetrics(now: now)
                nextMetrics = now + Self.metricsEveryMs
            }
        }
        stopped.signal()
    }

    private func take(_ taken: Inbox, now: Int64) {
        if !taken.forgotten.isEmpty {
            for index in queues.indices {
                for trip in taken.forgotten { queues[index].forget(trip: trip) }
            }
            store.append(taken.forgotten.map { .webhook(.forgetTrip(trip: $0)) }) { _ in }
        }
        for event in taken.events {
            let payload = try? WebhookPayload(storedEvent: event.body)
            for index in queues.indices {
                queues[index].eventStored(trip: event.trip, n: event.n, payload: payload, now: now)
            }
        }
        for (trip, n) in taken.overflow {
            for index in queues.indices { queues[index].knowEvents(trip: trip, upTo: n, now: now) }
        }
    }

    private func startDeliveries(now: Int64) {
        let store = self.store
        let fetch: (String, Int, Int) -> [[UInt8]]? = { trip, after, limit in
            try? store.events(tripID: trip, after: after, limit: limit)
        }
        for index in queues.indices {
            for delivery in queues[index].nextDeliveries(now: now, fetch: fetch) {
                send(delivery, queue: index, now: now)
            }
        }
    }

    private func send(_ delivery: WebhookQueue.Delivery, queue index: Int, now: Int64) {
        let timestamp = now / 1000
        let token = nextToken
        nextToken += 1
        guard let signature = WebhookSignature.header(key: settings.key, payload: delivery.payload, timestamp: timestamp) else {
            report(index, delivery.trip, id: delivery.payload.webhookID, verdict: queues[index].finished(trip: delivery.trip, outcome: .failed(status: 0), now: now), why: "signing failed")
            return
        }
        let headers = [
            "content-type: application/json",
            "webhook-id: \(delivery.payload.webhookID)",
            "webhook-timestamp: \(timestamp)",
            "webhook-signature: \(signature)",
            "Expect:",  // no 100-continue round trip before the body
        ]
        let url = queues[index].url
        tokens[token] = (index, delivery.trip)
        if !curl.post(token: token, url: url, headers: headers, body: delivery.payload.body, timeoutMs: settings.timeoutMs) {
            tokens[token] = nil
            let verdict = queues[index].finished(trip: delivery.trip, outcome: .failed(status: 0), now: now)
            report(index, delivery.trip, id: delivery.payload.webhookID, verdict: verdict, why: "libcurl refused the request")
        }
    }

    private func finish(_ result: CurlMulti.Done, now: Int64) {
        guard let (index, trip) = tokens.removeValue(forKey: result.token) else { return }
        let ok = result.error == nil && (200...299).contains(result.status)
        let id = "\(trip):\(queues[index].position(of: trip) + 1)"
        let verdict = queues[index].finished(trip: trip, outcome: ok ? .delivered : .failed(status: result.status), now: now)
        report(index, trip, id: id, verdict: verdict, why: result.error ?? "HTTP \(result.status)")
    }

    private func report(_ index: Int, _ trip: String, id: String, verdict: WebhookQueue.Verdict, why: String) {
        let url = queues[index].url
        switch verdict {
        case .delivered:
            break
        case .retryAt(let at):
            HubLog.log(.debug, "webhook not delivered, retrying", [
                ("url", .string(url)), ("webhook_id", .string(id)), ("reason", .string(why)),
                ("retry_in_s", .seconds(Double(at - wallClockMillis()) / 1000)),
            ])
        case .dropped:
            HubLog.log(.warn, "webhook dropped after 24 h of retries", [("url", .string(url)), ("webhook_id", .string(id)), ("reason", .string(why))])
        }
    }

    private func pollTimeout(now: Int64, until due: Int64) -> Int {
        if queues.contains(where: \.hasReadyWork) { return 0 }
        var wake = due
        for queue in queues { if let at = queue.nextWake() { wake = min(wake, at) } }
        return Int(max(0, min(1000, wake - now)))
    }

    private func flushPositions() {
        var records: [StoreRecord] = []
        var moved: [(Int, [String: Int])] = []
        for index in queues.indices {
            let positions = queues[index].takeDirtyPositions()
            guard !positions.isEmpty else { continue }
            moved.append((index, positions))
            let url = queues[index].url
            for (trip, n) in positions { records.append(.webhook(.position(url: url, trip: trip, delivered: n))) }
        }
        guard !records.isEmpty else { return }
        let written = moved
        store.append(records) { [self] result in
            guard case .failure = result else { return }
            // Written again with the next flush (delivery stays at least once meanwhile).
            inbox.withLock { box in for (index, positions) in written { box.unstored.append((index, positions)) } }
        }
    }

    private func publishMetrics(now: Int64) {
        let text = WebhookMetrics.render(queues.map {
            WebhookMetrics.URLState(url: $0.url, delivered: $0.delivered, failed: $0.failed, dropped: $0.dropped,
                                    pending: $0.pending, oldestPendingMs: $0.oldestPendingMs(now: now))
        })
        published.withLock { $0.text = text }
    }
}
