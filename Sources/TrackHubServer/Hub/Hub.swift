import Foundation
import Synchronization
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// The hub: trips, subscriptions and fan-out, driven by one libwebsockets service thread.
///
/// Threads: the service thread owns every field below except `inbox`. Other threads
/// (store completions, the fleet builder, signal handlers) hand work in with
/// `runOnServiceThread`, which queues a closure and wakes the loop (`lws_cancel_service`).
/// No lock is taken on the per-frame path. That is why this class is `@unchecked Sendable`.
public final class Hub: @unchecked Sendable {
    public let config: HubConfig
    /// Which Origins and Host names are answered (PROTOCOL 1).
    let originPolicy: OriginPolicy
    let store: TripStore
    let host: LWSServerHost
    let serverName = TrackHubVersion.serverName
    var metrics = HubMetrics()

    var sessions: [ConnectionID: Session] = [:]
    var trips: [String: TripEntry] = [:]
    /// Subscribers per trip id, also for trips that do not exist yet.
    var subscribers: [String: [ConnectionID: SubscriptionMode]] = [:]
    /// Trips whose marker may move: the only ones the tick looks at, spread over sub-ticks.
    var animating: TickSchedule
    /// Trip ids being created (stored, not yet committed).
    var pendingCreates: Set<String> = []
    /// The highest event number sent live per trip (so a replay never repeats one).
    var lastBroadcastEvent: [String: Int] = [:]
    var nextSlot = 1
    var draining = false
    var lastHousekeeping: Int64 = 0
    var lastStateFlush: Int64 = 0
    /// Trips whose marker state changed and is not yet in a store batch.
    var tripsWithUnstoredState: Set<String> = []
    var storeBatchesInFlight = 0
    /// Reads handed to the store-read queue whose answers are still to go out.
    var storeReadsInFlight = 0
    var fleet = FleetState()
    /// Registered phones by id (PROTOCOL 11), as stored.
    var devices: [String: StoredDevice] = [:]
    /// Each device's fix-rate bucket (`--max-fix-rate`).
    var deviceFixTokens: [String: (tokens: Double, at: Int64)] = [:]
    /// Where commands become durable: the trip store alone, or the cluster's Redis log.
    /// Made on first use (it needs the hub), in `start` before the service thread runs.
    private(set) lazy var commands: any CommandLog = makeCommandLog()
    /// Token checks, shared by the WebSocket side and the HTTP gate.
    let tokens: TokenVerifier
    /// What a `/v1` request gets before it runs (PROTOCOL 4's order of errors).
    let apiGate: APIGate
    /// The write policy and lifetime rules of WebSocket sessions (decisions; the hub acts).
    let sessionPolicy: SessionPolicy
    /// Delivers events to `--webhook` URLs on its own thread (Hub+Webhooks.swift); set in `start`.
    var webhooks: WebhookDispatcher?

    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let startedSignal = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)
    private let startError = Mutex<String?>(nil)
    private var serviceThread: Thread?

    /// The port the hub listens on (valid after `start()`).
    public private(set) var port = 0
    /// The `--osmand-listen` port (valid after `start()`; 0 without one).
    public var osmandPort: Int { host.secondBoundPort }

    public init(config: HubConfig, store: TripStore) {
        self.config = config
        self.originPolicy = OriginPolicy(config: config)
        self.store = store
        self.animating = TickSchedule(tickHz: config.tickHz)
        let tokens = TokenVerifier(secrets: config.jwtSecrets)
        self.tokens = tokens
        self.sessionPolicy = SessionPolicy(
            maxUnsentBytes: config.maxUnsentBytes, maxUnsentDurationMs: config.maxUnsentDurationMs,
            pingIntervalMs: config.pingIntervalMs, authTimeoutMs: config.authTimeoutMs, isSecured: tokens.isSecured)
        self.apiGate = APIGate(
            isSecured: tokens.isSecured,
            limits: APICall.Limits(protocolLimits: config.protocolLimits, maxRoutePoints: config.maxRoutePoints),
            authenticate: { request, now throws(ProtocolError) in try tokens.authenticate(request, now: now) })
        self.host = LWSServerHost(options: ServerHostOptions(
            host: config.listenHost, port: config.listenPort, useLibev: config.useLibev,
            maxMessageBytes: config.maxMessageBytes, maxBodyBytes: config.maxBodyBytes,
            bodyTimeoutMicros: config.bodyTimeoutMs * 1000, maxConnectionsPerAddress: config.maxConnsPerIP,
            tlsCertPath: config.tlsCertPath, tlsKeyPath: config.tlsKeyPath, logs: .hubLog,
            secondHost: config.osmandListenHost, secondPort: config.osmandListenPort))
        host.delegate = HubHostDelegate(hub: self)
    }

    /// Loads stored trips, binds the port and starts the service thread. Returns once the
    /// hub accepts connections.
    public func start() throws {
        try commands.restore()
        try restoreDevices()
        try startWebhooks()
        let thread = Thread { [self] in
            do {
                try host.start()
            } catch {
                startError.withLock { $0 = "\(error)" }
                startedSignal.signal()
                stoppedSignal.signal()
                return
            }
            port = host.boundPort
            host.startTimer(intervalMicros: Int64(1_000_000 / (max(1, config.tickHz) * animating.phases)))
            commands.startThreads()
            startedSignal.signal()
            host.run()
            stopWebhooks()
            commands.stopThreads()
            stoppedSignal.signal()
        }
        thread.name = "trackhub-service"
        thread.stackSize = 4 << 20
        serviceThread = thread
        thread.start()
        startedSignal.wait()
        if let message = startError.withLock({ $0 }) {
            throw ServerHostError.contextCreationFailed(message)
        }
    }

    /// Blocks until the hub has stopped.
    public func waitUntilStopped() {
        stoppedSignal.wait()
        stoppedSignal.signal()
    }

    /// Graceful shutdown (SIGTERM): stop taking new work, commit and ack what was received,
    /// close every connection with 1001, then stop. Returns at once; see `waitUntilStopped`.
    public func beginShutdown() {
        runOnServiceThread { [self] in
            if draining { return }  // a second signal: the drain is already under way
            drain(startedAt: monotonicMicros())
        }
    }

    /// Stops at once (tests): connections are dropped without ceremony.
    public func stopNow() {
        host.requestStop()
        waitUntilStopped()
        store.close()
    }

    /// Runs `body` on a trip's entry in place. Copying an entry out of `trips`, changing it
    /// and writing it back would make Swift copy the trip's remembered-fix sets on every
    /// fix (copy-on-write with two owners); this never does.
    @discardableResult
    func mutateTrip<Result>(_ id: String, _ body: (inout TripEntry) -> Result) -> Result? {
        guard let index = trips.index(forKey: id) else { return nil }
        return body(&trips.values[index])
    }

    /// Hands work to the service thread; safe from any thread.
    func runOnServiceThread(_ work: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(work) }
        host.wake()
    }

    private func drainInbox() {
        let work = inbox.withLock { pending -> [@Sendable () -> Void] in
            let taken = pending
            pending.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { item() }
    }

    // MARK: - Start-up

    private func makeCommandLog() -> any CommandLog {
        if let address = config.clusterAddress { return RedisCommandLog(hub: self, address: address) }
        return LocalCommandLog(hub: self)
    }

    /// Loads the trips of the local store (a hub alone; see `LocalCommandLog`).
    func restoreTrips() throws {
        let now = wallClockMillis()
        for item in try store.loadTrips() {
            var entry = TripEntry(trip: item.trip, createdAt: item.createdAt, slot: nextSlot, riderJSON: item.riderJSON)
            nextSlot += 1
            if entry.trip.status == .ended { entry.endedAt = item.trip.endedAt ?? item.createdAt }  // when it ended, for retention
            trips[item.trip.id] = entry
            lastBroadcastEvent[item.trip.id] = item.trip.lastEventNumber
            if entry.trip.isAnimating(at: now) { animating.insert(item.trip.id) }
        }
    }

    // MARK: - Shutdown

    private func drain(startedAt: Int64) {
        if !draining {
            draining = true
        }
        flushChangedTripStates()
        let waitedMs = (monotonicMicros() - startedAt) / 1000
        // PROTOCOL 9: SIGTERM "stores and acks the fixes it has received". An ack that is
        // queued but not yet written is lost by `closeSession` (it empties the queue), so
        // also wait (within the timeout) until every open connection's queue has drained.
        let unsentReplies = sessions.values.contains { !$0.isClosing && !$0.queue.isEmpty }
        let unansweredCommands = commands.hasUnansweredCommands
        if (storeBatchesInFlight > 0 || storeReadsInFlight > 0 || unsentReplies || unansweredCommands) && waitedMs < config.shutdownTimeoutMs {
            // Acks still to come or still to be written: look again shortly.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
                runOnServiceThread { [self] in drain(startedAt: startedAt) }
            }
            return
        }
        for id in sessions.keys {
            closeSession(id, code: .goingAway, reason: "hub shutting down")
        }
        if sessions.isEmpty || waitedMs >= config.shutdownTimeoutMs {
            host.requestStop()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            runOnServiceThread { [self] in finishDrain(startedAt: startedAt) }
        }
    }

    private func finishDrain(startedAt: Int64) {
        let waitedMs = (monotonicMicros() - startedAt) / 1000
        if sessions.isEmpty || waitedMs >= config.shutdownTimeoutMs {
            host.requestStop()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            runOnServiceThread { [self] in finishDrain(startedAt: startedAt) }
        }
    }
}

extension Hub {
    func serviceWoke() {
        drainInbox()
    }

    func timerFired() {
        // Work handed in before the loop could be woken (e.g. a signal during start-up).
        drainInbox()
        tick()
    }
}
