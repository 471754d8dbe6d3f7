import Dispatch
import Foundation
import Synchronization
import TrackHubSync
import TrackHubProtocol
import TrackHubCurl
import TrackHubRedis
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
/// kept per URL is how far each trip has been delivered (a `WebhookPositionKeeper`: the
/// store, or Redis in cluster mode), written at most every `positionFlushMs`. After a crash
/// the events after the stored positions are sent again, with the same `webhook-id`.
///
/// Cluster mode: a node gets the events of the partitions it applies, and delivers those of
/// the partitions it owns (`WebhookScope`). It remembers every trip's last event; when the
/// partitions it owns change it reads the positions from Redis and starts from there.
///
/// Threads: `queues`, `known`, `tokens`, `scope`, `keeper` and `curl` (but its `wake`) belong
/// to the dispatcher thread (`start` runs before it exists); `inbox` and `published` are the
/// only state shared, each behind a `Mutex`. That is why the class is `@unchecked Sendable`.
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
        var unstored: [(generation: Int, positions: [String: [String: Int]])] = []
        var stopping = false
    }

    let settings: WebhookSettings
    private let store: TripStore
    private let curl: any WebhookTransport
    private let keeper: WebhookPositionKeeper
    private let scope: WebhookScope?
    /// The scope the queues were made for.
    private var scopeNow = WebhookScope.Current()
    private let inbox = HubMutex(Inbox())
    private let published = HubMutex("")
    private let stopped = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let limits: WebhookQueue.Limits

    /// The queues while this node delivers (always on a hub alone), else empty.
    private var queues: [WebhookQueue] = []
    /// Bumped whenever `queues` are made anew: answers to older requests are ignored.
    private var generation = 0
    /// Every trip's last stored event, delivered or not (to start the queues from).
    private var known: [String: Int] = [:]
    private var tokens: [Int: (generation: Int, queue: Int, trip: String, id: String)] = [:]
    private var nextToken = 1
    private var nextActivationAttempt: Int64 = 0

    /// - Parameters:
    ///   - keeper: where the positions are kept (the store, or the cluster's Redis).
    ///   - scope: the partitions this node delivers (a cluster); nil: every trip.
    ///   - transport: makes the HTTP client for at most the given connections; nil: libcurl's
    ///     (`CurlMulti`).
    init(
        settings: WebhookSettings, store: TripStore, keeper: any WebhookPositionKeeper, scope: WebhookScope? = nil,
        limits: WebhookQueue.Limits = WebhookQueue.Limits(), transport: ((_ connections: Int) throws -> any WebhookTransport)? = nil
    ) throws(WebhookError) {
        self.settings = settings
        self.store = store
        self.limits = limits
        // Each URL's own cap (`maxInFlight`) is what binds: two URLs on one host must not
        // share one host's connections, or a hanging one would starve the other.
        let connections = limits.maxInFlight * max(1, settings.urls.count)
        if let transport {
            do {
                curl = try transport(connections)
            } catch {
                throw .client("\(error)")
            }
        } else {
            do {
                curl = try CurlMulti(perHost: connections, total: connections)
            } catch {
                throw .client(error.description)
            }
        }
        self.keeper = keeper
        self.scope = scope
    }

    /// Starts the thread. `lastEvents`: every trip's last event `n`, as restored. On a hub
    /// alone the positions are read here, so a store that cannot be read stops the start.
    func start(lastEvents: [String: Int]) throws(WebhookError) {
        known = lastEvents
        let now = systemWallClockMillis()
        if scope == nil { try activate(now: now) }
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
        published.withLock { $0 }
    }

    /// Stops the thread after storing the positions reached.
    /// Requests under way are abandoned: they are sent again after the next start.
    func stop() {
        guard started.exchange(false, ordering: .relaxed) else { return }
        inbox.withLock { $0.stopping = true }
        curl.wake()
        stopped.wait()
    }

    // MARK: - The dispatcher thread

    private func run() {
        var nextFlush = systemWallClockMillis() + Self.positionFlushMs
        var nextMetrics = systemWallClockMillis() + Self.metricsEveryMs
        while true {
            let taken = inbox.withLock { box -> Inbox in
                let taken = box
                box = Inbox(stopping: box.stopping)
                return taken
            }
            var now = systemWallClockMillis()
            for (generation, positions) in taken.unstored where generation == self.generation {
                for index in queues.indices { queues[index].restoreDirty(positions[queues[index].url] ?? [:]) }
            }
            if taken.stopping {
                flushPositions()
                break
            }
            take(taken, now: now)
            checkScope(now: now)
            startDeliveries(now: now)
            let timeout = pollTimeout(now: now, until: min(nextFlush, nextMetrics, scope == nil ? .max : now + 250))
            let done = curl.poll(timeoutMs: timeout)
            now = systemWallClockMillis()
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

    /// Makes the queues from the stored positions and what is known of every trip.
    private func activate(now: Int64) throws(WebhookError) {
        let positions = try keeper.load(urls: settings.urls, lastEvents: known, now: now)
        let backoff = WebhookBackoff(baseMs: settings.retryBaseMs)
        generation += 1
        queues = settings.urls.map { url in
            let start = positions[url] ?? [:]
            var queue = WebhookQueue(url: url, eventNames: settings.eventNames, backoff: backoff, limits: limits,
                                     positions: start.filter { isDelivered($0.key) })
            for (trip, last) in known where last > (start[trip] ?? 0) && isDelivered(trip) {
                queue.knowEvents(trip: trip, upTo: last, now: now)
            }
            return queue
        }
    }

    /// Whether this node delivers a trip's events (always on a hub alone).
    private func isDelivered(_ trip: String) -> Bool {
        scope?.delivers(trip, in: scopeNow) ?? true
    }

    /// Cluster mode: starts the queues again when the partitions this node owns change.
    private func checkScope(now: Int64) {
        guard let scope else { return }
        let wanted = scope.read()
        guard wanted.generation != scopeNow.generation || (queues.isEmpty && !wanted.partitions.isEmpty && now >= nextActivationAttempt) else { return }
        defer { publishMetrics(now: now) }
        flushPositions()
        scopeNow = wanted
        queues = []
        generation += 1
        guard !wanted.partitions.isEmpty else { return }
        do {
            try activate(now: now)
            HubLog.log(.debug, "this node delivers the webhooks of \(wanted.partitions.count) partitions")
        } catch {
            nextActivationAttempt = now + 1000
            HubLog.log(.warn, "\(error)")
        }
    }

    private func take(_ taken: Inbox, now: Int64) {
        if !taken.forgotten.isEmpty {
            for trip in taken.forgotten { known[trip] = nil }
            for index in queues.indices {
                for trip in taken.forgotten { queues[index].forget(trip: trip) }
            }
            keeper.forget(trips: taken.forgotten, urls: settings.urls)
        }
        for event in taken.events {
            known[event.trip] = max(known[event.trip] ?? 0, event.n)
            guard !queues.isEmpty, isDelivered(event.trip) else { continue }
            let payload = try? WebhookPayload(storedEvent: event.body)
            for index in queues.indices {
                queues[index].eventStored(trip: event.trip, n: event.n, payload: payload, now: now)
            }
        }
        for (trip, n) in taken.overflow {
            known[trip] = max(known[trip] ?? 0, n)
            guard isDelivered(trip) else { continue }
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
        let id = delivery.payload.webhookID
        guard let signature = WebhookSignature.header(key: settings.key, payload: delivery.payload, timestamp: timestamp) else {
            report(index, id: id, verdict: queues[index].finished(trip: delivery.trip, outcome: .failed(status: 0), now: now), why: "signing failed")
            return
        }
        let headers = [
            "content-type: application/json",
            "webhook-id: \(id)",
            "webhook-timestamp: \(timestamp)",
            "webhook-signature: \(signature)",
            "Expect:",  // no 100-continue round trip before the body
        ]
        let token = nextToken
        nextToken += 1
        tokens[token] = (generation, index, delivery.trip, id)
        if !curl.post(token: token, url: queues[index].url, headers: headers, body: delivery.payload.body, timeoutMs: settings.timeoutMs) {
            tokens[token] = nil
            let verdict = queues[index].finished(trip: delivery.trip, outcome: .failed(status: 0), now: now)
            report(index, id: id, verdict: verdict, why: "libcurl refused the request")
        }
    }

    private func finish(_ result: CurlMulti.Done, now: Int64) {
        guard let request = tokens.removeValue(forKey: result.token), request.generation == generation else { return }
        let ok = result.error == nil && (200...299).contains(result.status)
        let verdict = queues[request.queue].finished(trip: request.trip, outcome: ok ? .delivered : .failed(status: result.status), now: now)
        report(request.queue, id: request.id, verdict: verdict, why: result.error ?? "HTTP \(result.status)")
    }

    private func report(_ index: Int, id: String, verdict: WebhookQueue.Verdict, why: String) {
        let url = queues[index].url
        switch verdict {
        case .delivered, .ignored:
            break
        case .retryAt(let at):
            HubLog.log(.debug, "webhook not delivered, retrying", [
                ("url", .string(url)), ("webhook_id", .string(id)), ("reason", .string(why)),
                ("retry_in_s", .seconds(Double(at - systemWallClockMillis()) / 1000)),
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
        var moved: [String: [String: Int]] = [:]
        for index in queues.indices {
            let positions = queues[index].takeDirtyPositions()
            if !positions.isEmpty { moved[queues[index].url] = positions }
        }
        guard !moved.isEmpty else { return }
        let written = moved
        let generation = self.generation
        keeper.write(written) { [self] in
            // Written again with the next flush (delivery stays at least once meanwhile).
            inbox.withLock { $0.unstored.append((generation, written)) }
        }
    }

    private func publishMetrics(now: Int64) {
        let states: [WebhookMetrics.URLState]
        if queues.isEmpty {
            states = settings.urls.map { WebhookMetrics.URLState(url: $0, delivered: 0, failed: 0, dropped: 0, pending: 0, oldestPendingMs: 0) }
        } else {
            states = queues.map {
                WebhookMetrics.URLState(url: $0.url, delivered: $0.delivered, failed: $0.failed, dropped: $0.dropped,
                                        pending: $0.pending, oldestPendingMs: $0.oldestPendingMs(now: now))
            }
        }
        let text = WebhookMetrics.render(states, partitionsDelivered: scope == nil ? nil : (queues.isEmpty ? 0 : scopeNow.partitions.count))
        published.withLock { $0 = text }
    }
}
