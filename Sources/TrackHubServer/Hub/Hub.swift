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
    /// Store batches and reads, answered back on the service thread.
    let storage: TripStorage
    /// What subscribers (and webhooks) are sent when a trip changes.
    let publisher: TripPublisher
    /// Ticks the moving trips (a hub alone; a cluster ticks on its log's grid).
    let animator: TripAnimator
    /// The trips, their animation schedule and what goes with each (one owner: see TripTable).
    let trips: TripTable
    var draining = false
    var lastHousekeeping: Int64 = 0
    var lastStateFlush: Int64 = 0
    /// The fleet channel (PROTOCOL 8): the viewports watched and the clustering index.
    let fleet: FleetService
    /// Registered phones (PROTOCOL 11): their table, `/v1/devices` and a phone's fix.
    let devices: DeviceService
    /// Share links (PROTOCOL 13): issued and revoked, and the sharing they end.
    let shares: ShareService
    /// The trips of the HTTP API: the list, a trip, its trail, a carried-out command's answer.
    let tripsAPI: TripsAPI
    /// Who may do what: tokens, the `/v1` gate, Origins and Hosts, refusals per address and
    /// the token rules of live sessions (PROTOCOL 1, 2, 4).
    let access: AccessControl
    /// The routes the hub finds on the router's queue (PROTOCOL 16).
    let routes: RouteSearches
    /// Where commands become durable: the trip store alone, or the cluster's Redis log.
    /// Made on first use (it needs the hub), in `start` before the service thread runs.
    private(set) lazy var commands: any CommandLog = makeCommandLog()

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
        self.trips = TripTable(tickHz: config.tickHz)
        self.host = host ?? LWSServerHost(options: ServerHostOptions(
            host: config.listenHost, port: config.listenPort, useLibev: config.useLibev,
            maxMessageBytes: config.maxMessageBytes, maxBodyBytes: config.maxBodyBytes,
            bodyTimeoutMicros: config.bodyTimeoutMs * 1000, maxConnectionsPerAddress: config.maxConnsPerIP,
            tlsCertPath: config.tlsCertPath, tlsKeyPath: config.tlsKeyPath, logs: .hubLog,
            secondHost: config.osmandListenHost, secondPort: config.osmandListenPort))
        self.fanout = Fanout(host: self.host, policy: AccessControl.sessionPolicy(for: config), clock: clock)
        self.inbox = ServiceThreadInbox(host: self.host)
        self.storage = TripStorage(store: store, trips: trips, inbox: inbox, metrics: metrics)
        self.publisher = TripPublisher(trips: trips, fanout: fanout, storage: storage, metrics: metrics, clock: clock)
        self.animator = TripAnimator(trips: trips, publisher: publisher, metrics: metrics, inbox: inbox, host: self.host, clock: clock)
        self.replies = Replies(host: self.host, fanout: fanout, metrics: metrics)
        self.fleet = FleetService(config: config, clock: clock, trips: trips, fanout: fanout, replies: replies, metrics: metrics, inbox: inbox)
        self.access = AccessControl(config: config, clock: clock, fanout: fanout, trips: trips, fleet: fleet)
        self.routes = RouteSearches(config: config, clock: clock, trips: trips, replies: replies, metrics: metrics, inbox: inbox)
        self.devices = DeviceService(
            trips: trips, replies: replies, metrics: metrics, storage: storage, maxFixRate: config.maxFixRate, isSecured: access.isSecured)
        self.shares = ShareService(
            links: access.tokens.shares, secrets: access.tokens.secrets, trips: trips, fanout: fanout, replies: replies, storage: storage, clock: clock)
        self.tripsAPI = TripsAPI(
            trips: trips, storage: storage, replies: replies, fanout: fanout, host: self.host, clock: clock, serverName: serverName,
            maxTrips: config.maxTrips, maxRoutePoints: config.maxRoutePoints)
        // What the services ask of the command log, read through the hub when asked: the log
        // is made lazily (it needs the hub), after the services. Not strong: the hub owns the
        // services. Unowned for the fleet tick (run by the hub's own timer); weak for a
        // search's answer, which the router's queue holds and may hand back after the hub has gone.
        fleet.fleetMembers = { [unowned self] local, now in commands.fleetMembers(local, now: now) }
        routes.submit = { [weak self] command, reply, now in self?.commands.submit(command, reply: reply, now: now) }
        routes.checkTripCapacity = { [weak self] () throws(ProtocolError) in try self?.tripsAPI.checkTripCapacity() }
        self.host.delegate = HubHostDelegate(hub: self)
        publisher.endCustomerSubscriptionsIfOver = { [unowned self] trip, now in shares.endCustomerSubscriptionsIfOver(trip: trip, now: now) }
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
        storage.store.close()
    }

    // MARK: - Start-up

    private func makeCommandLog() -> any CommandLog {
        let log: any CommandLog = config.clusterSeeds.map { RedisCommandLog(hub: self, seeds: $0) } ?? LocalCommandLog(hub: self)
        publisher.keepsRecentEvents = log.keepsRecentEvents
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
        for item in try storage.store.loadTrips() {
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
        storage.flushChangedTripStates()
        let waitedMs = (clock.monotonicMicros() - startedAt) / 1000
        // PROTOCOL 9: SIGTERM "stores and acks the fixes it has received". An ack that is
        // queued but not yet written is lost by `closeSession` (it empties the queue), so
        // also wait (within the timeout) until every open connection's queue has drained.
        let unsentReplies = fanout.hasUnsentMessages
        let unansweredCommands = commands.hasUnansweredCommands
        if (storage.isBusy || unsentReplies || unansweredCommands) && waitedMs < config.shutdownTimeoutMs {
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
        animator.resumeSubTick()  // the rest of a sub-tick that stepped aside for input (Hub+Tick)
    }

    func timerFired() {
        // Work handed in before the loop could be woken (e.g. a signal during start-up).
        inbox.drain()
        tick()
    }
}
