import Foundation
import Synchronization
import TrackHubLWS
import TrackHubSync

/// One run of the generator in this process: every connection on one libwebsockets client
/// context (the libev loop) and its one service thread.
///
/// Thread safety (`@unchecked Sendable`): `control` and `progress` are the only state shared
/// between the main thread and the service thread. Everything else is set up before the
/// loop starts, then touched only on the service thread (delegate callbacks and
/// `clientServiceWoke`), and read by the main thread only after `host.stop()` returned.
final class LoadRun: WebSocketClientDelegate, @unchecked Sendable {
    struct Control {
        var stopSending = false
        var endingTrips = false
        var stopping = false
    }

    struct Progress {
        var unacked = 0
        var endedMissing = 0
        var open = 0
        var frames = 0
    }

    let options: LoadOptions
    let routes: [LoadRoute]
    let endpoint: WebSocketURL
    /// Where viewers connect, round-robin (`--viewer-url`; default: `endpoint`).
    let viewerEndpoints: [WebSocketURL]
    /// Per partition, where its trips' couriers and viewers connect (`--partition-url`; empty: unused).
    let partitionEndpoints: [WebSocketURL]
    let control = HubMutex(Control())
    let progress = HubMutex(Progress())
    var host: LWSClientHost?

    // The timeline, in wall-clock microseconds; fixed before the loop starts.
    var startAt: Int64 = 0
    var rampEnd: Int64 = 0
    var measureStart: Int64 = 0
    var measureEnd: Int64 = 0

    // Service-thread state.
    var trips: [TripLoad] = []
    var viewers: [ViewerLoad] = []
    var fleetViewers: [FleetViewerLoad] = []
    var idle: [ConnectionID?] = []
    var owners: [Owner] = [.none]
    var wasOpened: [Bool] = [false]
    var churnClosing: Set<UInt64> = []
    var nextToOpen = 0
    var counters = LoadCounters()
    var secondLatency = LatencyHistogram()
    var lastTurn: Int64 = 0
    var lastLive: Int64 = 0
    var liveBase = (fixes: 0, acks: 0, frames: 0, viewerFrames: 0)
    var churnCredit = 0.0
    var churnCursor = 0
    var lastChurn: Int64 = 0
    var lastEndedCheck: Int64 = 0
    var outbox: [(ConnectionID, OutboundMessage)] = []
    var hubAtLive: ProcessSample?
    var selfAtLive: ProcessSample?
    var lastHubLine = ""

    /// `endpoint` is `options.url`, parsed (LoadOptions checked it).
    init(options: LoadOptions, routes: [LoadRoute], endpoint: WebSocketURL) {
        self.options = options
        self.routes = routes
        self.endpoint = endpoint
        let viewerURLs = options.viewerURLs.compactMap(WebSocketURL.init)
        viewerEndpoints = viewerURLs.isEmpty ? [endpoint] : viewerURLs
        partitionEndpoints = options.partitionURLs.compactMap(WebSocketURL.init)
        buildPopulation()
    }

    /// The trips, viewers, fleet viewers and idle connections of this shard.
    private func buildPopulation() {
        let o = options
        let travelSeconds = Double(o.rampMs + o.warmupMs + o.durationMs) / 1000 + 20
        var tripIndex: [Int: Int32] = [:]
        for g in 0..<o.couriers where g % o.shardCount == o.shard {
            let routeIndex = g % routes.count
            let route = routes[routeIndex]
            let travel = o.speedMps * travelSeconds
            let room = route.length - travel - 200
            // Spread the start points along the route (golden-ratio sequence), never so far
            // that the courier would arrive before the run ends.
            let fraction = (Double(g) * 0.618_033_988_75).truncatingRemainder(dividingBy: 1)
            let start = room > 0 ? fraction * room : 0
            let id = o.target == .nchan ? "\(o.runID)_\(g)" : "\(o.runID)-t\(g)"
            tripIndex[g] = Int32(trips.count)
            var trip = TripLoad(id: id, route: routeIndex, startM: start)
            if o.stopLinkShare > 0 { trip.stopAlongs = StopLinkPlan.alongs(reachM: start + travel, lengthM: route.length) }
            trips.append(trip)
        }
        var viewerCount = 0
        for j in 0..<o.viewers {
            if o.couriers > 0 {
                guard let t = tripIndex[j % o.couriers] else { continue }
                viewerCount += 1
                let segments = o.target == .trackhub && Double(viewerCount % 100) < o.segmentsShare * 100
                var viewer = ViewerLoad(trip: t, segments: segments)
                if StopLinkPlan.isOnStopLink(viewer: viewerCount - 1, share: o.stopLinkShare) {
                    // Spread over the trip's stops in turn.
                    viewer.stopLink = trips[Int(t)].stopLinkViewers % StopLinkPlan.stopsPerTrip
                    trips[Int(t)].stopLinkViewers += 1
                    counters.stopLinkViewers += 1
                }
                trips[Int(t)].viewers.append(Int32(viewers.count))
                viewers.append(viewer)
            }
        }
        for k in 0..<o.fleetViewers where k % o.shardCount == o.shard {
            fleetViewers.append(FleetViewerLoad(zoom: o.fleetZooms[k % o.fleetZooms.count], step: k))
        }
        let idleCount = (0..<o.idleConnections).filter { $0 % o.shardCount == o.shard }.count
        idle = Array(repeating: nil, count: idleCount)
    }

    var plannedConnections: Int { trips.count + viewers.count + fleetViewers.count + idle.count }

    /// Runs the whole scenario and returns what was counted.
    func run(observing observed: inout RunObservations) throws -> LoadCounters {
        let host = LWSClientHost(delegate: self, useLibev: true)
        self.host = host
        let now = wallMicros()
        startAt = now
        rampEnd = now + options.rampMs * 1000
        measureStart = rampEnd + options.warmupMs * 1000
        measureEnd = measureStart + options.durationMs * 1000
        try host.start()
        let ticking = Atomic<Bool>(true)
        let ticker = Thread {
            while ticking.load(ordering: .relaxed) {
                usleep(5_000)
                host.wakeService()
            }
        }
        ticker.start()

        sleepUntil(measureStart)
        observed.hubWindowStart = options.hubPID.flatMap { ProcessProbe.sample(pid: $0) }
        observed.selfWindowStart = ProcessProbe.sample(pid: getpid())
        observed.machineWindowStart = MachineSample.now()
        sleepUntil(measureEnd)
        observed.machineWindowEnd = MachineSample.now()
        observed.hubWindowEnd = options.hubPID.flatMap { ProcessProbe.sample(pid: $0) }
        observed.selfWindowEnd = ProcessProbe.sample(pid: getpid())
        if let a = observed.selfWindowStart, let b = observed.selfWindowEnd { observed.windowSeconds = Double(b.atMicros - a.atMicros) / 1_000_000 }
        control.withLock { $0.stopSending = true }
        // Every fix sent gets its ack (or the run says how many did not).
        waitFor(seconds: 15) { $0.unacked == 0 }
        if options.target == .trackhub && options.endTrips && !trips.isEmpty {
            endTrips()
            control.withLock { $0.endingTrips = true }
            waitFor(seconds: 15) { $0.endedMissing == 0 }
        } else {
            // Let what is in flight arrive: until nothing came for 300 ms (at most 3 s).
            var last = -1
            let give = wallMicros() + 3_000_000
            while wallMicros() < give {
                let frames = progress.withLock { $0.frames }
                if frames == last { break }
                last = frames
                usleep(300_000)
            }
        }
        control.withLock { $0.stopping = true }
        let final = progress.withLock { $0 }
        host.stop()
        ticking.store(false, ordering: .relaxed)
        counters.unackedAtEnd = options.target == .trackhub ? final.unacked : 0
        counters.endedMissing = final.endedMissing
        return counters
    }

    /// Ends the created trips over HTTP (`DELETE /v1/trips/{id}`): viewers then get `ended`,
    /// after which the hub sends that trip nothing more.
    private func endTrips() {
        let http = tripHTTP()
        let ids = trips.filter(\.created).map(\.id)
        counters.httpFailures += HubHTTP.forEach(ids.count) { i in
            (http(ids[i]).request("DELETE", "/v1/trips/\(ids[i])")?.status ?? 0) == 200
        }
    }

    private func sleepUntil(_ time: Int64) {
        while true {
            let left = time - wallMicros()
            if left <= 0 { return }
            usleep(UInt32(min(left, 100_000)))
        }
    }

    private func waitFor(seconds: Double, _ done: (Progress) -> Bool) {
        let give = wallMicros() + Int64(seconds * 1_000_000)
        while wallMicros() < give {
            if progress.withLock({ done($0) }) { return }
            usleep(20_000)
        }
    }

    // MARK: - WebSocketClientDelegate (service thread)

    func clientServiceWoke() {
        let now = wallMicros()
        guard now - lastTurn >= 2_000 else { return }
        lastTurn = now
        serviceTurn(now: now)
    }

    func clientOpened(_ id: ConnectionID) { connectionOpened(id) }

    func clientReceived(_ id: ConnectionID, message: [UInt8]) { received(id, message) }

    func clientClosed(_ id: ConnectionID, code: UInt16?, reason: String) { connectionClosed(id, code: code, reason: reason) }
}
