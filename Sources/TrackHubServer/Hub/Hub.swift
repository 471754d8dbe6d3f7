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
/// `inbox.run`, which queues a closure and wakes the loop (`lws_cancel_service`).
/// No lock is taken on the per-frame path. That is why this class is `@unchecked Sendable`.
public final class Hub: @unchecked Sendable {
    /// The settings the hub was started with (`trackhub serve`'s flags); never changed after `init`.
    public let config: HubConfig
    /// Which Origins and Host names are answered (PROTOCOL 1).
    let originPolicy: OriginPolicy
    let store: TripStore
    /// The sockets: libwebsockets, or a test's fake (`ServerHost`).
    let host: any ServerHost
    /// Every rule's notion of now (keep-alive, slow readers, tokens, drain, the tick).
    let clock: HubClock
    let serverName = TrackHubVersion.serverName
    let metrics = HubMetrics()

    /// The open WebSocket sessions, who follows which trip, and every write to them.
    let fanout: Fanout
    /// Every answer to a request, in its door's form.
    let replies: Replies
    /// The trips, their animation schedule and what goes with each (one owner: see TripTable).
    let trips: TripTable
    var draining = false
    var lastHousekeeping: Int64 = 0
    var lastStateFlush: Int64 = 0
    var storeBatchesInFlight = 0
    /// The trips of the current sub-tick still to be ticked after the hub returned to the
    /// loop to read input first (Hub+Tick); nil when none wait. At most one sub-tick's.
    var subTickRest: SubTickRest?
    /// Reads handed to the store-read queue whose answers are still to go out.
    var storeReadsInFlight = 0
    var fleet = FleetState()
    /// Builds the fleet index on the fleet queue, one build at a time, reusing what the
    /// riders that did not move left from the last build (the lock is never contended).
    let fleetBuilder = Mutex(FleetIndexBuilder())
    /// Registered phones (PROTOCOL 11): their table, `/v1/devices` and a phone's fix.
    let devices: DeviceService
    /// Share links (PROTOCOL 13): issued and revoked, and the sharing they end.
    let shares: ShareService
    /// The trips of the HTTP API: the list, a trip, its trail, a carried-out command's answer.
    let tripsAPI: TripsAPI
    /// `--max-refusal-rate`: refusals for bad credentials per address (PROTOCOL 1).
    var refusals: RefusalLimiter
    /// The HTTP clients of searches on the router's queue, so a search whose client has gone
    /// is dropped unrun (PROTOCOL 16).
    let routeSearchClients = RouteSearchClients()
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

    /// Work other threads hand to the service thread.
    let inbox: ServiceThreadInbox
    private let startedSignal = DispatchSemaphore(value: 0)
    private let stoppedSignal = DispatchSemaphore(value: 0)
    private let startError = Mutex<String?>(nil)
    private var serviceThread: Thread?

    /// The port the hub listens on (valid after `start()`).
    public private(set) var port = 0
    /// The `--osmand-listen` port (valid after `start()`; 0 without one).
    public var osmandPort: Int { host.secondBoundPort }

    /// A hub on `store`. `host` nil: libwebsockets on `config`'s listeners; tests pass a fake
    /// host, and a manual `clock`.
    public init(config: HubConfig, store: TripStore, host: (any ServerHost)? = nil, clock: HubClock = .system) {
        self.config = config
        self.clock = clock
        self.originPolicy = OriginPolicy(config: config)
        self.store = store
        self.trips = TripTable(tickHz: config.tickHz)
        self.refusals = RefusalLimiter(ratePerSecond: config.maxRefusalRate)
        let tokens = TokenVerifier(secrets: config.jwtSecrets)
        self.tokens = tokens
        self.sessionPolicy = SessionPolicy(
            maxUnsentBytes: config.maxUnsentBytes, maxUnsentDurationMs: config.maxUnsentDurationMs,
            pingIntervalMs: config.pingIntervalMs, authTimeoutMs: config.authTimeoutMs, isSecured: tokens.isSecured)
        self.apiGate = APIGate(
            isSecured: tokens.isSecured,
            limits: APICall.Limits(protocolLimits: config.protocolLimits, maxRoutePoints: config.maxRoutePoints),
            authenticate: { request, now throws(ProtocolError) in try tokens.authenticate(request, now: now) })
        self.host = host ?? LWSServerHost(options: ServerHostOptions(
            host: config.listenHost, port: config.listenPort, useLibev: config.useLibev,
            maxMessageBytes: config.maxMessageBytes, maxBodyBytes: config.maxBodyBytes,
            bodyTimeoutMicros: config.bodyTimeoutMs * 1000, maxConnectionsPerAddress: config.maxConnsPerIP,
            tlsCertPath: config.tlsCertPath, tlsKeyPath: config.tlsKeyPath, logs: .hubLog,
            secondHost: config.osmandListenHost, secondPort: config.osmandListenPort))
        self.fanout = Fanout(host: self.host, policy: sessionPolicy, clock: clock)
        self.inbox = ServiceThreadInbox(host: self.host)
        self.replies = Replies(host: self.host, fanout: fanout, metrics: metrics)
        self.devices = DeviceService(
            trips: trips, replies: replies, metrics: metrics, store: store, maxFixRate: config.maxFixRate, isSecured: tokens.isSecured)
        self.shares = ShareService(
            links: tokens.shares, secrets: tokens.secrets, trips: trips, fanout: fanout, replies: replies, store: store, clock: clock)
        self.tripsAPI = TripsAPI(
            trips: trips, replies: replies, fanout: fanout, host: self.host, clock: clock, serverName: serverName,
            maxTrips: config.maxTrips, maxRoutePoints: config.maxRoutePoints)
        self.host.delegate = HubHostDelegate(hub: self)
        // The store's reads and batches are the hub's own (Hub+Fixes) for now: the services
        // reach them through it, weakly, since the hub owns them.
        shares.storePaths = self
        tripsAPI.storePaths = self
    }

    /// Loads stored trips, binds the port and starts the service thread. Returns once the
    /// hub accepts connections.
    public func start() throws {
        try commands.restore()  // trips, devices and share links
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
            host.startTimer(intervalMicros: Int64(1_000_000 / (max(1, config.tickHz) * trips.animating.phases)))
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
        inbox.run { [self] in
            if draining { return }  // a second signal: the drain is already under way
            drain(startedAt: clock.monotonicMicros())
        }
    }

    /// Stops at once (tests): connections are dropped without ceremony.
    public func stopNow() {
        host.requestStop()
        waitUntilStopped()
        store.close()
    }

    // MARK: - Start-up

    private func makeCommandLog() -> any CommandLog {
        let log: any CommandLog
        if let seeds = config.clusterSeeds {
            log = RedisCommandLog(hub: self, seeds: seeds)
        } else {
            log = LocalCommandLog(hub: self)
        }
        // The services submit to the log the hub owns: they hold it weakly, and get it here
        // because the log can be made only once the hub exists.
        devices.commandLog = log
        shares.commandLog = log
        tripsAPI.commandLog = log
        return log
    }

    /// Loads the trips of the local store (a hub alone; see `LocalCommandLog`).
    func restoreTrips() throws {
        let now = clock.wallMillis()
        for item in try store.loadTrips() {
            trips.add(item.trip.id, lastEventSent: item.trip.lastEventNumber) { slot in
                var entry = TripEntry(trip: item.trip, createdAt: item.createdAt, slot: slot, riderJSON: item.riderJSON)
                if entry.trip.status == .ended { entry.endedAt = item.trip.endedAt ?? item.createdAt }  // when it ended, for retention
                return entry
            }
            if item.trip.isAnimating(at: now) { trips.animating.insert(item.trip.id) }
        }
    }

    // MARK: - Shutdown

    private func drain(startedAt: Int64) {
        if !draining {
            draining = true
        }
        flushChangedTripStates()
        let waitedMs = (clock.monotonicMicros() - startedAt) / 1000
        // PROTOCOL 9: SIGTERM "stores and acks the fixes it has received". An ack that is
        // queued but not yet written is lost by `closeSession` (it empties the queue), so
        // also wait (within the timeout) until every open connection's queue has drained.
        let unsentReplies = fanout.hasUnsentMessages
        let unansweredCommands = commands.hasUnansweredCommands
        if (storeBatchesInFlight > 0 || storeReadsInFlight > 0 || unsentReplies || unansweredCommands) && waitedMs < config.shutdownTimeoutMs {
            // Acks still to come or still to be written: look again shortly.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
                inbox.run { [self] in drain(startedAt: startedAt) }
            }
            return
        }
        for id in fanout.sessions.keys {
            fanout.close(id, code: .goingAway, reason: "hub shutting down")
        }
        if fanout.sessions.isEmpty || waitedMs >= config.shutdownTimeoutMs {
            host.requestStop()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            inbox.run { [self] in finishDrain(startedAt: startedAt) }
        }
    }

    private func finishDrain(startedAt: Int64) {
        let waitedMs = (clock.monotonicMicros() - startedAt) / 1000
        if fanout.sessions.isEmpty || waitedMs >= config.shutdownTimeoutMs {
            host.requestStop()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            inbox.run { [self] in finishDrain(startedAt: startedAt) }
        }
    }
}

extension Hub {
    func serviceWoke() {
        inbox.drain()
        resumeSubTick()  // the rest of a sub-tick that stepped aside for input (Hub+Tick)
    }

    func timerFired() {
        // Work handed in before the loop could be woken (e.g. a signal during start-up).
        inbox.drain()
        tick()
    }
}
