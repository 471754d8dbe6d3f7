/// The state machine of one trip (PROTOCOL section 6). A value type; Codable so the store can
/// persist it whole and restore it exactly (the route encodes as its points and its index is
/// rebuilt on decode).
///
/// The hub drives it in three ways, always passing the clock in (`now`, hub ms since the epoch):
/// fixes (`judge`, then `apply` once stored), ticks (`tick`) and commands (`proceed`,
/// `reroute`, `end`). Every method returns the events it caused, numbered per trip from 1.
public struct Trip: Sendable, Codable {
    /// The trip id (PROTOCOL: 1–64 characters of `A-Z a-z 0-9 . _ : -`).
    public let id: String
    /// The planned route; nil for a trip tracked freely (straight lines, no progress).
    public internal(set) var route: Route?
    /// The waypoints in visiting order: visited ones first (a prefix), then the unvisited.
    public internal(set) var waypoints: [Waypoint]
    /// Where the trip ends; nil without a route and without one given (then it never arrives).
    public internal(set) var destination: GeoPoint?
    /// Along-route distance of the destination's projection, metres; nil without a route.
    public internal(set) var destinationAlongM: Double?
    /// The trip's settings.
    public internal(set) var config: TripConfig
    /// The `n` of the trip's last event (0 before any).
    public internal(set) var lastEventNumber: Int
    /// When the trip arrived (hub ms since the epoch); nil until then. For `--end-after`.
    public internal(set) var arrivedAt: Int64?
    /// When the trip ended (hub ms since the epoch); nil until then.
    public internal(set) var endedAt: Int64?

    /// Index (into `waypoints`) of the waypoint the trip holds at; nil unless holding.
    var holdingPosition: Int?
    /// The number of visited waypoints (they form a prefix of `waypoints`).
    var visitedCount: Int
    /// The highest waypoint index handed out so far; reroutes number new ones after it.
    var highestWaypointIndex: Int
    /// True from an off-route fix until the first fix back on the route (6.8).
    var isOffRoute: Bool

    // Judging (6.5): what the next fix is compared with.
    var seenSeqs: SeenFixKeys
    var seenTimestamps: SeenFixKeys
    /// The last fix `judge` found applicable.
    var lastApplied: AppliedFix?
    /// The `ts` of the applied fix before `lastApplied` (for `apply`'s derived duration, 6.2).
    var previousAppliedTs: Int64?

    // Speed and ETA (6.9).
    /// The last applied fix as the speed estimate saw it.
    var speedReference: SpeedReference?
    /// The exponentially weighted mean speed, m/s; nil until two fixes were applied.
    public internal(set) var speedMps: Double?

    // The marker.
    /// The running (or last finished) animation; nil before the first fix.
    var animation: Animation?
    /// The marker's last on-route along distance (0 before the first fix): used while the marker
    /// is off the route geometry (excursions, the way back to it).
    var onRouteAlongM: Double
    /// The bearing shown while the marker stands still (a zero-length animation has no direction).
    var restingBearing: Double

    // Frames (6.3).
    /// The position of the last frame `tick` returned; nil before any.
    var lastFramePosition: GeoPoint?
    /// `tick` has shown the animation up to this time (so a finished one is not sampled again).
    var framedThrough: Int64
    /// Waypoints and arrival must be checked on the next tick even if the marker does not move.
    var needsCheck: Bool

    // Catch-up limit (6.2) and arrival (6.7). Optional so that states stored before these
    // existed still decode (nil reads as empty / false).
    /// Device and arrival times of the last applied fixes, oldest first, for the clock ratio.
    var recentFixTimes: [FixTiming]?
    /// A jump happened since the last frame: the next frame carries `jump`.
    var nextFrameIsJump: Bool?
    /// The next tick sends a frame even if the marker did not move (the arrived frame at the
    /// destination).
    var frameDue: Bool?

    // Routes the hub finds (PROTOCOL 16). Optional so older stored states still decode.
    /// Where the route came from; nil reads as `.client`.
    var routeOrigin: RouteSource?
    /// The router's travel time for the whole route, seconds; nil for a client's route.
    public internal(set) var routerDurationS: Double?
    /// Applied fixes off the route in the current excursion (nil: none), for auto-reroute.
    var offRouteFixes: Int?
    /// The along-route distance of the last applied on-route fix's target (6.1's reference for
    /// choosing among candidates, with the marker's); nil before one, and after a new route.
    /// Optional so older stored states still decode.
    var lastTargetAlongM: Double?

    // The courier's signal (PROTOCOL 18). Optional so older stored states still decode
    // (nil: no fix stored yet).
    /// Last fix, battery, recent arrivals and the signal events outstanding.
    var signal: CourierSignal?

    // Stops (PROTOCOL 17). Optional so older stored states still decode.
    /// When the waypoint the trip holds at was reached (hub ms): its dwell counts down from here.
    var holdingSince: Int64?

    /// The applied fix `judge` remembers: reported position and device time.
    struct AppliedFix: Sendable, Codable, Equatable {
        var ts: Int64
        var point: GeoPoint
    }

    /// One applied fix's device time (`ts`) and hub arrival time, ms since the epoch.
    struct FixTiming: Sendable, Codable, Equatable {
        var ts: Int64
        var receivedAt: Int64
    }

    /// One applied fix as the speed estimate uses it: along-route distance when on the route.
    struct SpeedReference: Sendable, Codable, Equatable {
        var ts: Int64
        var point: GeoPoint
        var alongM: Double?
    }

    /// A new trip, status `pending`; emits nothing itself: call `created(now:)` for trip_created.
    ///
    /// On a routed trip each waypoint in order, then the destination (default: the route's last
    /// point), is projected onto the nearest point of the route at or after the previous one's
    /// projection.
    /// - Throws: `TripSetupError.waypointTooFar` / `.destinationTooFar` when a projection is farther
    ///   than `config.rerouteDistanceM` from the point.
    /// `stops` gives each waypoint's id, name and dwell (PROTOCOL 17), parallel to `waypoints`
    /// (nil or shorter: the rest have none).
    /// - Throws: `.duplicateStopID` when two waypoints share an id.
    public init(
        id: String, route: Route?, waypoints: [GeoPoint], destination: GeoPoint?,
        config: TripConfig, now: Int64, routeSource: RouteSource = .client, routerDurationS: Double? = nil,
        stops: [StopDetails]? = nil
    ) throws(TripSetupError) {
        let details = Self.details(stops, count: waypoints.count)
        if let repeated = Self.firstRepeatedID(details, taken: []) { throw .duplicateStopID(index: repeated) }
        let dest = destination ?? route?.end
        let projected = try Self.project(
            waypoints: waypoints.enumerated().map { (index: $0.offset, point: $0.element) },
            destination: dest, onto: route, config: config)
        self.id = id
        self.route = route
        self.waypoints = zip(waypoints.indices, projected.alongs).map {
            Waypoint(
                index: $0.0, point: waypoints[$0.0], alongM: $0.1,
                id: details[$0.0].id, name: details[$0.0].name, dwellS: details[$0.0].dwellS)
        }
        self.destination = dest
        self.destinationAlongM = projected.destinationAlongM
        self.config = config
        self.lastEventNumber = 0
        self.arrivedAt = nil
        self.endedAt = nil
        self.holdingPosition = nil
        self.visitedCount = 0
        self.highestWaypointIndex = waypoints.count - 1
        self.isOffRoute = false
        self.seenSeqs = SeenFixKeys()
        self.seenTimestamps = SeenFixKeys()
        self.lastApplied = nil
        self.previousAppliedTs = nil
        self.speedReference = nil
        self.speedMps = nil
        self.animation = nil
        self.onRouteAlongM = 0
        self.restingBearing = 0
        self.lastFramePosition = nil
        self.framedThrough = .min
        self.needsCheck = false
        self.recentFixTimes = nil
        self.nextFrameIsJump = nil
        self.frameDue = nil
        self.routeOrigin = routeSource == .client ? nil : routeSource
        self.routerDurationS = routerDurationS
        self.offRouteFixes = nil
        self.signal = nil
        self.holdingSince = nil
    }

    /// Where the route came from (PROTOCOL 16 `route_source`); nil without a route.
    public var routeSource: RouteSource? { route == nil ? nil : (routeOrigin ?? .client) }

    /// Applied fixes off the route since the trip left it (0 while on it).
    public var offRouteFixCount: Int { isOffRoute ? (offRouteFixes ?? 0) : 0 }

    /// The trip's status (PROTOCOL 6.10). `unknown` is never a Trip's: it is the hub's answer for
    /// a trip that does not exist.
    public var status: TripStatus {
        if endedAt != nil { return .ended }
        if arrivedAt != nil { return .arrived }
        if holdingPosition != nil { return .holding }
        if animation == nil { return .pending }
        return isOffRoute ? .offRoute : .moving
    }

    /// The current leg: the number of visited waypoints (0-based leg index).
    public var leg: Int { visitedCount }

    /// The number of waypoints not visited yet.
    public var unvisitedWaypointCount: Int { waypoints.count - visitedCount }

    /// The waypoint the trip holds at, if holding.
    public var holdingWaypoint: Waypoint? { holdingPosition.map { waypoints[$0] } }

    /// The trip_created event, n = 1 when called first (as the hub does right after `init`).
    public mutating func created(now: Int64) -> TripEvent {
        makeEvent(.tripCreated, now: now, position: nil)
    }

    /// The next event, numbered.
    mutating func makeEvent(_ kind: TripEventKind, now: Int64, position: GeoPoint?, stop: Waypoint? = nil) -> TripEvent {
        lastEventNumber += 1
        return TripEvent(n: lastEventNumber, kind: kind, t: now, position: position, stopID: stop?.id, stopName: stop?.name)
    }

    /// Projects waypoints in order, then the destination, each at or after the previous
    /// projection (PROTOCOL 5). Without a route every projection is nil.
    static func project(
        waypoints: [(index: Int, point: GeoPoint)], destination: GeoPoint?, onto route: Route?,
        config: TripConfig, fromAlongM start: Double = 0
    ) throws(TripSetupError) -> (alongs: [Double?], destinationAlongM: Double?) {
        guard let route else { return (waypoints.map { _ in nil }, nil) }
        var previous = start
        var alongs: [Double?] = []
        alongs.reserveCapacity(waypoints.count)
        for w in waypoints {
            let m = route.nearest(to: w.point, fromAlongM: previous)
            guard m.offsetM <= config.rerouteDistanceM else {
                throw .waypointTooFar(index: w.index, distanceM: m.offsetM)
            }
            alongs.append(m.alongM)
            previous = m.alongM
        }
        var destinationAlong: Double?
        if let destination, destination == route.end {
            // The route's own end (the default): its along distance is the length, even on a
            // loop whose end coincides with its start.
            destinationAlong = route.lengthM
        } else if let destination {
            let m = route.nearest(to: destination, fromAlongM: previous)
            guard m.offsetM <= config.rerouteDistanceM else { throw .destinationTooFar(distanceM: m.offsetM) }
            destinationAlong = m.alongM
        }
        return (alongs, destinationAlong)
    }
}
