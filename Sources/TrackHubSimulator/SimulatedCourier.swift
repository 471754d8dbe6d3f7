import Foundation
import TrackHubCore
import TrackHubProtocol

/// One simulated courier phone: a small state machine that connects, creates a trip, drives
/// it sending fixes, stops at via points until the hub confirms and then proceeds, arrives,
/// ends the trip and starts another. It never touches a socket: `advance` and `receive`
/// return the actions its transport should carry out.
///
/// Time is the injected wall clock `now` (ms since the epoch); behaviour comes from two
/// generators seeded from the run's seed: `planRNG` draws trips and pauses (so the same seed
/// gives the same routes whatever the network timing), `motionRNG` speeds, intervals and noise.
public struct SimulatedCourier: Sendable {
    /// What this rider plays.
    public enum Kind: Sendable {
        /// Synthetic trips on catalog routes.
        case synthetic
        /// A recorded track, again and again (`repeats`) or once (`--replay`).
        case trace(RecordedTrack, repeats: Bool)
    }

    enum Phase: Sendable, Equatable {
        case new, connecting
        case idle(until: Int64)
        case creating(request: Int)
        case driving
        case awaitingWaypoint(index: Int, deadline: Int64)
        case holding(index: Int, proceedAt: Int64)
        case proceeding(index: Int, message: Int)
        case rerouting(request: Int)
        case awaitingArrival(deadline: Int64)
        case atDestination(endAt: Int64)
        case ending(request: Int)
        case finished, failed
    }

    enum Pending: Sendable { case fix, proceed, other }

    /// The rider's number, from 0: its index in the simulation, and the stream index of its
    /// generators (so a rider's trips do not depend on how many riders there are).
    public let rider: Int
    let kind: Kind
    let settings: SimulationSettings
    let catalog: RouteCatalog
    let riderName: String
    var planRNG: SplitMix64
    var motionRNG: SplitMix64
    var phase: Phase = .new
    var trip: ActiveTrip?
    var plannedTrip: TripPlan?
    var pendingRoute: (route: Route, shiftM: Double?)?
    var previousTripID: String?
    var nextMessageID = 1
    var nextRequestID = 1
    var pending: [Int: Pending] = [:]
    /// `--protocol osmand|owntracks`: the device registration in flight, and fixes sent over
    /// HTTP whose answer is still to come (request ids).
    var deviceRequest: Int?
    var deviceFixRequests: Set<Int> = []
    /// PROTOCOL 17 (`--stops`): the customers following the current trip's stops, by link
    /// number (their connections'), the link requests in flight (request id → link number),
    /// and the next link number.
    var customers: [Int: StopCustomer] = [:]
    var linkRequests: [Int: Int] = [:]
    var nextLink = 0

    /// A new rider, not yet connected; its name comes from `rider` (or the track's name for a trace).
    public init(rider: Int, kind: Kind, settings: SimulationSettings, catalog: RouteCatalog) {
        self.rider = rider
        self.kind = kind
        self.settings = settings
        self.catalog = catalog
        planRNG = SplitMix64.stream(seed: settings.seed, index: UInt64(rider) * 2)
        motionRNG = SplitMix64.stream(seed: settings.seed, index: UInt64(rider) * 2 + 1)
        let names = ["Aino", "Mikko", "Leena", "Juha", "Sofia", "Omar", "Ana", "Ivo", "Mei", "Tariq", "Nora", "Pablo", "Ravi", "Elsa", "Kofi", "Yuki"]
        switch kind {
        case .synthetic: riderName = "\(names[rider % names.count]) (\(rider + 1))"
        case .trace(let track, _): riderName = "\(track.name) replay (\(rider + 1))"
        }
    }

    /// True for `simulate --replay`: one recorded track, played once, with no pauses around it.
    var isOneReplay: Bool {
        if case .trace(_, let repeats) = kind { return !repeats }
        return false
    }

    /// True once the rider has nothing more to do (a finished replay, or a lost connection).
    public var isDone: Bool { phase == .finished || phase == .failed }

    /// The current trip's id, once the hub created it.
    public var tripID: String? { trip?.id }

    /// The wall time of the next timed step, if one is scheduled.
    public var nextDue: Int64? {
        switch phase {
        case .new: return 0
        case .idle(let until): return until
        case .driving: return trip?.nextFixAt
        case .awaitingWaypoint(_, let at), .holding(_, let at), .awaitingArrival(let at), .atDestination(let at): return at
        default: return nil
        }
    }

    /// Wall milliseconds for `seconds` of device time.
    func wallMs(_ seconds: Double) -> Int64 { max(1, Int64((seconds * 1000 / settings.speedup).rounded())) }

    // MARK: time

    /// Timed steps: connecting, starting trips, sending due fixes, proceeding after a pause,
    /// ending trips, giving up on confirmations that never came.
    public mutating func advance(now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        switch phase {
        case .new:
            phase = .connecting
            return [.connect]
        case .idle(let until) where now >= until:
            return requestTrip(now: now, stats: &stats)
        case .driving:
            guard let due = trip?.nextFixAt, now >= due else { return [] }
            if case .trace = kind { return sendTracePoint(now: now, stats: &stats) }
            return drive(now: now, stats: &stats)
        case .holding(let index, let at) where now >= at:
            guard let id = trip?.id else { return [] }
            let message = takeMessageID(.proceed)
            phase = .proceeding(index: index, message: message)
            return [.send(CourierMessages.proceed(trip: id, id: message))]
        case .awaitingWaypoint(let index, let deadline) where now >= deadline:
            stats.recordError("rider \(rider + 1): the hub did not confirm via point \(index) of \(trip?.id ?? "?")")
            return endTrip(now: now)
        case .awaitingArrival(let deadline) where now >= deadline:
            stats.recordError("rider \(rider + 1): the hub did not confirm the arrival of \(trip?.id ?? "?")")
            return endTrip(now: now)
        case .atDestination(let endAt) where now >= endAt:
            // A replay waits for its last acks before ending the trip.
            if pending.values.contains(where: { $0 == .fix }) || !deviceFixRequests.isEmpty { return [] }
            return endTrip(now: now)
        default:
            return []
        }
    }

    // MARK: input

    /// Reacts to what the transport reports: the socket opening or closing, hub messages,
    /// HTTP answers.
    public mutating func receive(_ event: TransportEvent, now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        switch event {
        case .opened:
            guard phase == .connecting else { return [] }
            // Riders start spread over 3 s so many do not arrive at once; a replay starts now.
            phase = .idle(until: isOneReplay ? now : now + wallMs(planRNG.uniform(0...3)))
            return []
        case .closed(_, let code, let reason):
            guard !isDone else { return [] }
            stats.recordError("rider \(rider + 1): connection closed (\(code.map(String.init) ?? "no code") \(reason))")
            phase = .failed
            return []
        case .message(_, let bytes):
            return handle(ServerMessage(bytes), now: now, stats: &stats)
        case .httpResponse(_, let id, let status, let body):
            if let actions = linkAnswered(request: id, status: status, body: body, stats: &stats) { return actions }
            return handleHTTP(id: id, status: status, body: body, now: now, stats: &stats)
        case .linkOpened, .linkMessage, .linkClosed:
            return customerEvent(event, now: now, stats: &stats)
        }
    }

    /// What a courier acts on: acks and errors answering its own messages (by `re`), and its
    /// trip's events; everything else (frames, snapshots, segments) it ignores.
    private mutating func handle(_ message: ServerMessage, now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        // The courier's ids are small integers: an `re` that is not one answers someone else.
        let re = message.int("re").flatMap { Int(exactly: $0) }
        switch message.type {
        case .ack:
            guard let re, let kind = pending.removeValue(forKey: re) else { return [] }
            if kind == .fix {
                if message.bool("applied") == true {
                    stats.fixesApplied += 1
                } else {
                    stats.refusals[message.string("reason") ?? "unknown", default: 0] += 1
                }
            } else if kind == .proceed, case .proceeding(let index, let id) = phase, id == re {
                if var t = trip {
                    if let i = t.waypoints.firstIndex(where: { $0.index == index }) { t.waypoints[i].visited = true }
                    // The rider stood still: the next step starts from now.
                    t.lastFixWall = now
                    t.nextFixAt = now + nextFixDelay(t)
                    trip = t
                }
                phase = .driving
            }
            return []
        case .event:
            guard let tripID = message.string("trip"), let name = message.string("name") else { return [] }
            let index = message.int("index").flatMap { Int(exactly: $0) }
            stats.events[name, default: 0] += 1
            guard tripID == trip?.id else { return [] }
            switch (name, phase) {
            case ("waypoint_reached", .awaitingWaypoint(let waiting, _)) where index == waiting:
                phase = .holding(index: waiting, proceedAt: now + wallMs(dwellS(at: waiting)))
            case ("waypoint_reached", .driving):
                // Not expected (the rider stops short of via points); stop sending fixes anyway.
                phase = .holding(index: index ?? 0, proceedAt: now + wallMs(dwellS(at: index ?? 0)))
            case ("arrived", .awaitingArrival), ("arrived", .driving):
                phase = .atDestination(endAt: now + wallMs(planRNG.uniform(settings.arrivalDwellS)))
            default: break
            }
            return []
        case .cadence:
            if let tripID = message.string("trip"), let interval = message.int("interval_ms") {
                follow(askedIntervalMs: interval, trip: tripID, now: now)
            }
            return []
        case .error:
            let kind = re.flatMap { pending.removeValue(forKey: $0) }
            stats.recordError("rider \(rider + 1): \(message.string("code") ?? "?"): \(message.string("message") ?? "")")
            if kind == .proceed { return endTrip(now: now) }
            return []
        default:
            return []
        }
    }

    private mutating func handleHTTP(id: Int, status: Int, body: [UInt8], now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        let text = String(decoding: body.prefix(300), as: UTF8.self)
        if id == deviceRequest {
            deviceRequest = nil
            if status == 200 {
                trip?.nextFixAt = now
            } else {
                stats.recordError("rider \(rider + 1): PUT /v1/devices answered \(status) \(text)")
            }
            return []
        }
        if deviceFixRequests.remove(id) != nil {
            // A phone's answer: 200 is stored (applied or not, the app cannot tell).
            if status == 200 { stats.fixesApplied += 1 } else { stats.refusals["http_\(status)", default: 0] += 1 }
            // OwnTracks's answer may set its reporting interval (PROTOCOL 18), as the app would.
            if settings.fixProtocol == .owntracks, let interval = OwnTracksAnswer.requestedIntervalMs(in: body), let tripID = trip?.id {
                follow(askedIntervalMs: interval, trip: tripID, now: now)
            }
            return []
        }
        switch phase {
        case .creating(let request) where request == id:
            guard status == 201, let answer = try? JSONParser().parse(body), let tripID = answer["trip"]?.stringValue ?? answer["id"]?.stringValue else {
                stats.recordError("rider \(rider + 1): POST /v1/trips answered \(status) \(text)")
                phase = .idle(until: now + wallMs(planRNG.uniform(settings.pauseBetweenTripsS)))
                return []
            }
            return beginTrip(id: tripID, now: now, stats: &stats)
        case .rerouting(let request) where request == id:
            if status == 200, let (route, shift) = pendingRoute, var t = trip {
                t.route = route
                t.along = 0
                t.graphPath = nil
                t.waypoints = t.waypoints.compactMap { wp in
                    guard !wp.visited, let shift else { return nil }
                    return ActiveTrip.Waypoint(index: wp.index, along: wp.along - shift, visited: false, plannedDwellS: wp.plannedDwellS)
                }
                trip = t
            } else {
                stats.recordError("rider \(rider + 1): PUT route answered \(status) \(text)")
            }
            pendingRoute = nil
            phase = .driving
            return []
        case .ending(let request) where request == id:
            if status == 200 {
                stats.tripsEnded += 1
            } else {
                stats.recordError("rider \(rider + 1): DELETE answered \(status) \(text)")
            }
            if case .trace(_, let repeats) = kind, !repeats {
                phase = .finished
                return [.disconnect]
            }
            phase = .idle(until: now + wallMs(planRNG.uniform(settings.pauseBetweenTripsS)))
            return []
        default:
            return []
        }
    }

    /// How long the rider waits at waypoint `index` (device seconds): a stop's planned dwell,
    /// else a random pause from `dwellS`.
    mutating func dwellS(at index: Int) -> Double {
        if let planned = trip?.waypoints.first(where: { $0.index == index })?.plannedDwellS { return Double(planned) }
        return planRNG.uniform(settings.dwellS)
    }

    mutating func takeMessageID(_ kind: Pending) -> Int {
        let id = nextMessageID
        nextMessageID += 1
        pending[id] = kind
        return id
    }

    mutating func takeRequestID() -> Int {
        let id = nextRequestID
        nextRequestID += 1
        return id
    }
}

extension SimulatedCourier {
    /// The trip the rider is on and has not started ending, if any.
    public var openTripID: String? {
        switch phase {
        case .driving, .awaitingWaypoint, .holding, .proceeding, .rerouting, .awaitingArrival, .atDestination: trip?.id
        default: nil
        }
    }
}
