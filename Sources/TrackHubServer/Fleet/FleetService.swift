import Dispatch
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubSync

/// The fleet channel (PROTOCOL section 8): the viewports watched, the clustering index and
/// `GET /v1/fleet/clusters`.
///
/// On every fleet tick the service thread collects the markers (cheap), and a background
/// queue builds the clustering index and answers every distinct viewport once, encoding
/// each answer once. Back on the service thread, a viewport whose answer changed gets the
/// same bytes queued to all its subscribers. The work per tick therefore grows with the
/// number of distinct viewports, not with the number of viewers, and the network thread
/// never waits for a rebuild.
///
/// Threads: `state` and everything else but `builder` belong to the service thread. The
/// fleet queue's closure captures this object to build the index (`builder`, behind its
/// lock) and to hand the result back through `inbox`; that is why it is `@unchecked Sendable`.
final class FleetService: @unchecked Sendable {
    /// Where the index is built, off the service thread.
    private static let queue = DispatchQueue(label: "trackhub.fleet", qos: .userInitiated)

    /// The index, the cadence and the viewport groups (service thread).
    private var state = FleetState()
    /// Builds the fleet index on the fleet queue, one build at a time, reusing what the
    /// riders that did not move left from the last build (the lock is never contended).
    private let builder = HubMutex(FleetIndexBuilder())
    /// The markers of every partition, given this hub's own: the command log's
    /// `fleetMembers` (a cluster adds the other hubs' from Redis). Set by the hub once it is
    /// built: the log is made lazily, after the services, and needs the hub.
    var fleetMembers: (_ local: [FleetMember], _ now: Int64) -> [FleetMember] = { _, _ in
        preconditionFailure("FleetService.fleetMembers is set by the hub")
    }

    /// `--fleet-hz` and `--max-items`.
    private let config: HubConfig
    /// Now, for an answer before the first build.
    private let clock: HubClock
    /// The trips whose markers are clustered.
    private let trips: TripTable
    /// The viewers' sessions, where the answers are queued.
    private let fanout: Fanout
    /// The answer to `GET /v1/fleet/clusters`.
    private let replies: Replies
    /// The fleet's counters and tick histogram.
    private let metrics: HubMetrics
    /// How a build's result comes back to the service thread.
    private let inbox: ServiceThreadInbox

    /// The fleet channel of a hub with these parts.
    init(config: HubConfig, clock: HubClock, trips: TripTable, fanout: Fanout, replies: Replies, metrics: HubMetrics, inbox: ServiceThreadInbox) {
        self.config = config
        self.clock = clock
        self.trips = trips
        self.fanout = fanout
        self.replies = replies
        self.metrics = metrics
        self.inbox = inbox
    }

    /// A `viewport` op (nil: bbox null, clusters stop): the connection leaves its old group,
    /// joins the new one and gets its first answer at once, from the last index.
    func setViewport(_ id: ConnectionID, viewport: Viewport?, re: MessageID?) {
        guard fanout[id] != nil else { return }
        if let old = fanout[id]?.viewportKey {
            viewportRemoved(id, key: old)
            fanout[id]?.viewportKey = nil
        }
        guard let viewport else { return }  // bbox null: clusters stop, no reply
        let key = viewport.groupKey
        state.groups[key, default: FleetState.Group(viewport: viewport)].members.insert(id)
        fanout[id]?.viewportKey = key
        let answer = FleetAnswer(index: state.index, viewport: viewport, t: state.indexTime == 0 ? clock.wallMillis() : state.indexTime, maxItems: config.maxItems)
        if state.groups[key]?.lastBody == nil { state.groups[key]?.lastBody = answer.body() }
        metrics.fleetMessagesEncoded += 1
        fanout.enqueue(answer.message(re: re, replyKey: key), to: id)
    }

    /// The connection no longer watches the viewport `key` (it closed, or set another); an
    /// empty group goes.
    func viewportRemoved(_ id: ConnectionID, key: String) {
        guard var group = state.groups[key] else { return }
        group.members.remove(id)
        state.groups[key] = group.members.isEmpty ? nil : group
    }

    /// Called on every timer wake-up: starts a rebuild when one is due and none is running.
    func tickIfDue(now: Int64) {
        let intervalMs = Int64(1000 / config.fleetHz)
        let sinceDue = now - state.lastTickDue
        guard !state.buildInFlight, sinceDue >= intervalMs else { return }
        // Keep the cadence (`fleet_hz` ticks a second while a tick takes less than an
        // interval): the next is due an interval after this one was due. A tick a whole
        // interval late (a long build) starts the cadence again from now, so a slow
        // stretch is not followed by a burst of ticks.
        state.lastTickDue = sinceDue < 2 * intervalMs ? state.lastTickDue + intervalMs : now
        state.buildInFlight = true
        let tickStarted = systemMonotonicMicros()
        var members: [FleetMember] = []
        members.reserveCapacity(trips.count)
        trips.forEachEntryInPlace { id, entry in  // no copy of each entry (TripTable)
            guard entry.trip.status != .ended, let marker = entry.trip.marker(at: now) else { return }
            members.append(FleetMember(
                id: id, position: marker.position, status: entry.trip.status.rawValue, bearing: marker.bearingDeg, stale: entry.trip.isStale))
        }
        let allMembers = fleetMembers(members, now)  // a cluster: every partition's (PROTOCOL 15)
        let viewports = state.groups.map { (key: $0.key, viewport: $0.value.viewport) }
        let maxItems = config.maxItems
        Self.queue.async { [self] in
            let started = systemMonotonicMicros()
            let index = builder.withLock { $0.build(members: allMembers) }
            var answers: [(key: String, body: [UInt8], message: OutboundMessage)] = []
            for (key, viewport) in viewports {
                let answer = FleetAnswer(index: index, viewport: viewport, t: now, maxItems: maxItems)
                answers.append((key, answer.body(), answer.message(re: nil, replyKey: nil)))
            }
            let seconds = Double(systemMonotonicMicros() - started) / 1_000_000
            let result = FleetBuildResult(index: index, answers: answers, seconds: seconds)
            inbox.run { [self] in built(result, at: now, startedMicros: tickStarted) }
        }
    }

    /// A build is back on the service thread: the new index, and each changed answer to its
    /// viewport's watchers. `startedMicros`: when the tick began collecting markers
    /// (monotonic), for the tick's whole time: collecting, the build and the answers, and
    /// queueing what changed.
    private func built(_ result: FleetBuildResult, at now: Int64, startedMicros: Int64) {
        state.buildInFlight = false
        state.index = result.index
        state.indexTime = now
        metrics.fleetTicks += 1
        metrics.fleetRebuildSecondsLast = result.seconds
        metrics.fleetViewportsComputed += result.answers.count
        for answer in result.answers {
            guard var group = state.groups[answer.key] else { continue }
            if group.lastBody == answer.body { continue }
            group.lastBody = answer.body
            state.groups[answer.key] = group
            metrics.fleetMessagesEncoded += 1
            for id in group.members { fanout.enqueue(answer.message, to: id) }
        }
        metrics.fleetTick.observe(ms: (systemMonotonicMicros() - startedMicros + 999) / 1000)
    }

    /// `GET /v1/fleet/clusters`: the viewport's answer from the last index.
    func clustersHTTP(_ connection: ConnectionID, _ query: ClustersQuery, now: Int64) throws(ProtocolError) {
        let answer = FleetAnswer(index: state.index, viewport: query.viewport, t: state.indexTime == 0 ? now : state.indexTime, maxItems: config.maxItems)
        replies.respond(connection, status: 200, json: answer.httpBody())
    }
}

/// What a background fleet build hands back to the service thread.
private struct FleetBuildResult: @unchecked Sendable {
    // OutboundMessage is only touched on the service thread once handed over.
    var index: FleetIndex
    var answers: [(key: String, body: [UInt8], message: OutboundMessage)]
    var seconds: Double
}
