import Dispatch
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// The fleet channel (PROTOCOL section 8).
///
/// On every fleet tick the service thread collects the markers (cheap), and a background
/// queue builds the clustering index and answers every distinct viewport once, encoding
/// each answer once. Back on the service thread, a viewport whose answer changed gets the
/// same bytes queued to all its subscribers. The work per tick therefore grows with the
/// number of distinct viewports, not with the number of viewers, and the network thread
/// never waits for a rebuild.
struct FleetState {
    /// Connections watching one normalised viewport.
    struct Group {
        var viewport: Viewport
        var members: Set<ConnectionID> = []
        /// The answer last sent (without `t`), to tell whether it changed.
        var lastBody: [UInt8]?
    }

    var index: FleetIndex?
    var indexTime: Int64 = 0
    /// When the last fleet tick was due (the cadence; 0: none yet).
    var lastTickDue: Int64 = 0
    var buildInFlight = false
    var groups: [String: Group] = [:]
}

/// One viewport's answer, ready to encode.
struct FleetAnswer: Sendable {
    var viewport: Viewport
    var t: Int64
    var total: Int
    var truncated: Bool
    var items: [FleetItem]

    init(index: FleetIndex?, viewport: Viewport, t: Int64, maxItems: Int) {
        self.viewport = viewport
        self.t = t
        guard let index else {
            total = 0
            truncated = false
            items = []
            return
        }
        total = index.total
        let all = index.clusters(west: viewport.west, south: viewport.south, east: viewport.east, north: viewport.north, zoom: viewport.zoom)
        (items, truncated) = FleetIndex.truncate(all, maxItems: maxItems)
    }

    /// What decides "changed" (PROTOCOL 8): items, total and truncated; zoom and bbox are the key.
    func body() -> [UInt8] {
        FleetMessages.clustersContent(total: total, truncated: truncated, items: items)
    }

    /// The whole `clusters` message.
    /// `replyKey`: the viewport's key for its first answer (a later answer to the same viewport
    /// replaces it while it waits); nil for the updates of a fleet tick (latest-wins).
    func message(re: MessageID?, replyKey: String?) -> OutboundMessage {
        let bytes = FleetMessages.clusters(
            re: re, t: t, viewport: viewport, total: total, truncated: truncated, items: items, headroom: OutboundMessage.headroom)
        return OutboundMessage(bufferWithHeadroom: bytes, kind: replyKey.map { .viewportReply(key: $0) } ?? .clusters)
    }

    /// The HTTP body of `GET /v1/fleet/clusters` (a `clusters` message's fields, no `type`).
    func httpBody() -> [UInt8] {
        FleetMessages.clustersBody(t: t, viewport: viewport, total: total, truncated: truncated, items: items)
    }
}

extension Viewport {
    /// Viewports with the same key share one answer.
    var groupKey: String { "\(zoom)|\(west)|\(south)|\(east)|\(north)" }
}

extension Hub {
    private static let fleetQueue = DispatchQueue(label: "trackhub.fleet", qos: .userInitiated)

    func setViewport(_ id: ConnectionID, viewport: Viewport?, re: MessageID?) {
        guard fanout[id] != nil else { return }
        if let old = fanout[id]?.viewportKey {
            fleetViewportRemoved(id, key: old)
            fanout[id]?.viewportKey = nil
        }
        guard let viewport else { return }  // bbox null: clusters stop, no reply
        let key = viewport.groupKey
        fleet.groups[key, default: FleetState.Group(viewport: viewport)].members.insert(id)
        fanout[id]?.viewportKey = key
        let answer = FleetAnswer(index: fleet.index, viewport: viewport, t: fleet.indexTime == 0 ? clock.wallMillis() : fleet.indexTime, maxItems: config.maxItems)
        if fleet.groups[key]?.lastBody == nil { fleet.groups[key]?.lastBody = answer.body() }
        metrics.fleetMessagesEncoded += 1
        fanout.enqueue(answer.message(re: re, replyKey: key), to: id)
    }

    func fleetViewportRemoved(_ id: ConnectionID, key: String) {
        guard var group = fleet.groups[key] else { return }
        group.members.remove(id)
        fleet.groups[key] = group.members.isEmpty ? nil : group
    }

    /// Called on every timer wake-up: starts a rebuild when one is due and none is running.
    func fleetTickIfDue(now: Int64) {
        let intervalMs = Int64(1000 / config.fleetHz)
        let sinceDue = now - fleet.lastTickDue
        guard !fleet.buildInFlight, sinceDue >= intervalMs else { return }
        // Keep the cadence (`fleet_hz` ticks a second while a tick takes less than an
        // interval): the next is due an interval after this one was due. A tick a whole
        // interval late (a long build) starts the cadence again from now, so a slow
        // stretch is not followed by a burst of ticks.
        fleet.lastTickDue = sinceDue < 2 * intervalMs ? fleet.lastTickDue + intervalMs : now
        fleet.buildInFlight = true
        let tickStarted = systemMonotonicMicros()
        var members: [FleetMember] = []
        members.reserveCapacity(trips.count)
        trips.forEachEntryInPlace { id, entry in  // no copy of each entry (TripTable)
            guard entry.trip.status != .ended, let marker = entry.trip.marker(at: now) else { return }
            members.append(FleetMember(id: id, position: marker.position, status: entry.trip.status.rawValue, bearing: marker.bearingDeg))
        }
        let fleetMembers = commands.fleetMembers(members, now: now)  // a cluster: every partition's (PROTOCOL 15)
        let viewports = fleet.groups.map { (key: $0.key, viewport: $0.value.viewport) }
        let maxItems = config.maxItems
        Hub.fleetQueue.async { [self] in
            let started = systemMonotonicMicros()
            let index = fleetBuilder.withLock { $0.build(members: fleetMembers) }
            var answers: [(key: String, body: [UInt8], message: OutboundMessage)] = []
            for (key, viewport) in viewports {
                let answer = FleetAnswer(index: index, viewport: viewport, t: now, maxItems: maxItems)
                answers.append((key, answer.body(), answer.message(re: nil, replyKey: nil)))
            }
            let seconds = Double(systemMonotonicMicros() - started) / 1_000_000
            let result = FleetBuildResult(index: index, answers: answers, seconds: seconds)
            inbox.run { [self] in fleetBuilt(result, at: now, startedMicros: tickStarted) }
        }
    }

    /// `startedMicros`: when the tick began collecting markers (monotonic), for the tick's
    /// whole time: collecting, the build and the answers, and queueing what changed.
    private func fleetBuilt(_ result: FleetBuildResult, at now: Int64, startedMicros: Int64) {
        fleet.buildInFlight = false
        fleet.index = result.index
        fleet.indexTime = now
        metrics.fleetTicks += 1
        metrics.fleetRebuildSecondsLast = result.seconds
        metrics.fleetViewportsComputed += result.answers.count
        for answer in result.answers {
            guard var group = fleet.groups[answer.key] else { continue }
            if group.lastBody == answer.body { continue }
            group.lastBody = answer.body
            fleet.groups[answer.key] = group
            metrics.fleetMessagesEncoded += 1
            for id in group.members { fanout.enqueue(answer.message, to: id) }
        }
        metrics.fleetTick.observe(ms: (systemMonotonicMicros() - startedMicros + 999) / 1000)
    }

    func fleetClustersHTTP(_ connection: ConnectionID, _ query: ClustersQuery, now: Int64) throws(ProtocolError) {
        let answer = FleetAnswer(index: fleet.index, viewport: query.viewport, t: fleet.indexTime == 0 ? now : fleet.indexTime, maxItems: config.maxItems)
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
