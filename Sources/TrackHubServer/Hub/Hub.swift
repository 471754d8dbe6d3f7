import Foundation
import Synchronization
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// The hub: trips, subscriptions and fan-out, driven by one libwebsockets service thread.
///
/// It holds the components (`services`: built and wired in `HubServices`), the command log
/// they make durable through, and the service-thread loop that drives them: the host's
/// callbacks come in (HubHostDelegate) and go to the component that owns the work; the timer
/// ticks (Hub+Tick); SIGTERM drains. What each feature knows and decides is its service's.
///
/// Threads: the service thread owns every component. Other threads (store completions, the
/// fleet builder, the router, signal handlers) hand work in with `services.inbox.run`, which
/// queues a closure and wakes the loop (`lws_cancel_service`). No lock is taken on the
/// per-frame path. That is why this class is `@unchecked Sendable`.
public final class Hub: @unchecked Sendable {
    /// The settings the hub was started with (`trackhub serve`'s flags); never changed after `init`.
    public let config: HubConfig
    /// The components, one of each, wired to each other (HubServices).
    let services: HubServices
    /// Where commands become durable: the trip store alone, or the cluster's Redis log.
    let commands: any CommandLog
    /// The thread the host's loop runs on.
    private let serviceThread = ServiceThread()
    /// When the loop last flushed changed marker states and last did its housekeeping.
    var loopTimes = LoopTimes()
    /// True once a SIGTERM's drain has begun: new work is refused (PROTOCOL 9).
    var draining = false
    /// The webhooks' HTTP client maker, for `start` to make the dispatcher with.
    private let webhookTransport: (@Sendable (_ connections: Int) throws -> any WebhookTransport)?

    /// The port the hub listens on (valid after `start()`).
    public var port: Int { services.host.boundPort }
    /// The `--osmand-listen` port (valid after `start()`; 0 without one).
    public var osmandPort: Int { services.host.secondBoundPort }

    /// A hub on `backends` (HubBackends: the host, the store, the log, the router, the
    /// webhooks' client), with `clock` for every rule's now (tests pass a manual one).
    public init(config: HubConfig, backends: HubBackends, clock: HubClock = .system) {
        self.config = config
        let services = HubServices(config: config, backends: backends, clock: clock)
        self.services = services
        switch backends.log {
        case .local: commands = LocalCommandLog(services: services)
        case .redis(let seeds): commands = RedisCommandLog(services: services, seeds: seeds)
        }
        webhookTransport = backends.webhookTransport
        services.connect(to: commands)
        services.host.delegate = HubHostDelegate(hub: self)
    }

    /// Loads stored trips, binds the port and starts the service thread. Returns once the
    /// hub accepts connections.
    public func start() throws {
        try commands.restore()  // trips, devices and share links
        try startWebhooks(transport: webhookTransport)
        let subTicksPerSecond = max(1, config.tickHz) * services.trips.animating.phases
        do {
            try serviceThread.start(
                setUp: { [self] in
                    try services.host.start()
                    services.host.startTimer(intervalMicros: Int64(1_000_000 / subTicksPerSecond))
                    commands.startThreads()
                },
                run: { [self] in services.host.run() },
                tearDown: { [self] in
                    stopWebhooks()
                    commands.stopThreads()
                })
        } catch {
            throw ServerHostError.contextCreationFailed(error.message)
        }
    }

    /// Blocks until the hub has stopped.
    public func waitUntilStopped() {
        serviceThread.waitUntilStopped()
    }

    /// Graceful shutdown (SIGTERM): stop taking new work, commit and ack what was received,
    /// close every connection with 1001, then stop. Returns at once; see `waitUntilStopped`.
    public func beginShutdown() {
        services.inbox.run { [self] in
            if draining { return }  // a second signal: the drain is already under way
            drain(startedAt: services.clock.monotonicMicros())
        }
    }

    /// Stops at once (tests): connections are dropped without ceremony.
    public func stopNow() {
        services.host.requestStop()
        waitUntilStopped()
        services.storage.store.close()
    }

    // MARK: - Shutdown

    private func drain(startedAt: Int64) {
        if !draining {
            draining = true
        }
        services.storage.flushChangedTripStates()
        let waitedMs = (services.clock.monotonicMicros() - startedAt) / 1000
        // PROTOCOL 9: SIGTERM "stores and acks the fixes it has received". An ack that is
        // queued but not yet written is lost by `closeSession` (it empties the queue), so
        // also wait (within the timeout) until every open connection's queue has drained.
        let unsentReplies = services.fanout.hasUnsentMessages
        let unansweredCommands = commands.hasUnansweredCommands
        if (services.storage.isBusy || unsentReplies || unansweredCommands) && waitedMs < config.shutdownTimeoutMs {
            // Acks still to come or still to be written: look again shortly.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
                services.inbox.run { [self] in drain(startedAt: startedAt) }
            }
            return
        }
        for id in services.fanout.sessions.keys {
            services.fanout.close(id, code: .goingAway, reason: "hub shutting down")
        }
        if services.fanout.sessions.isEmpty || waitedMs >= config.shutdownTimeoutMs {
            services.host.requestStop()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            services.inbox.run { [self] in finishDrain(startedAt: startedAt) }
        }
    }

    private func finishDrain(startedAt: Int64) {
        let waitedMs = (services.clock.monotonicMicros() - startedAt) / 1000
        if services.fanout.sessions.isEmpty || waitedMs >= config.shutdownTimeoutMs {
            services.host.requestStop()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            services.inbox.run { [self] in finishDrain(startedAt: startedAt) }
        }
    }
}

extension Hub {
    func serviceWoke() {
        services.inbox.drain()
        services.animator.resumeSubTick()  // the rest of a sub-tick that stepped aside for input (Hub+Tick)
    }

    func timerFired() {
        // Work handed in before the loop could be woken (e.g. a signal during start-up).
        services.inbox.drain()
        tick()
    }
}
