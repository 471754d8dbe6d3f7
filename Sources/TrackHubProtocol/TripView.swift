import TrackHubCore

/// A trip as `snapshot` (PROTOCOL 4) and the HTTP trip bodies (PROTOCOL 5) show it: the
/// state machine, what the hub keeps beside it, and the moment to show it at.
public struct TripView: Sendable {
    /// The trip id (also for a trip that does not exist).
    public var id: String
    /// The trip's state; nil: the trip does not exist (`status` `unknown`).
    public var trip: Trip?
    /// The rider object as given at creation, as JSON bytes echoed verbatim; nil: `null`.
    public var riderJSON: [UInt8]?
    /// The fixes of `trail`, oldest first (the hub passes its last 100).
    public var trail: [FixInput]
    /// The hub's clock, ms since the epoch: where the marker is shown.
    public var now: Int64
    /// Whether the body has `route` (the trip list leaves it out).
    public var includeRoute: Bool
    /// Whether the body has `trail` (the trip list leaves it out).
    public var includeTrail: Bool
    /// Who it is shown to: a customer's share link sees less (PROTOCOL 13).
    public var audience: Audience = .full
    /// Adds `route_source` after `route`: the `201` answer of `POST /v1/trips` (PROTOCOL 16:
    /// "router" for a route the hub found, "client" for one given, `null` without a route).
    public var includeRouteSource = false
    /// The stop a stop subscription follows (PROTOCOL 17): the numbers are taken to it and the
    /// body adds `stop: {id, stops_before, eta_s, remaining_m, reached}`; nil: the trip's own.
    public var stop: StopRef?
    /// A link for one stop (PROTOCOL 17) with its `visible_within_stops`: with `stop` set, the
    /// body is what that link may see (`Trip.stopLinkSight`): the courier and the route
    /// stretch only while shown, only its own stop in `waypoints`, its stop as `destination`,
    /// `moving` while hidden, and the customer's rider, config, trail and battery. Nil: not a
    /// stop link.
    public var stopLinkVisibleWithinStops: Int?

    /// Who a view is for.
    public enum Audience: Sendable, Equatable {
        /// Viewers, couriers, admins: every field.
        case full
        /// A share link (PROTOCOL 13): the rider's `name` only (no `id`), `config` null, an
        /// empty `trail`; once the trip is over for customers (arrived and at the
        /// destination, or ended) no `position` or `bearing` either.
        case customer
    }

    /// A view of `trip` (nil: unknown) at `now` (ms since the epoch).
    public init(
        id: String, trip: Trip?, riderJSON: [UInt8]? = nil, trail: [FixInput] = [], now: Int64,
        includeRoute: Bool = true, includeTrail: Bool = true
    ) {
        self.id = id
        self.trip = trip
        self.riderJSON = riderJSON
        self.trail = trail
        self.now = now
        self.includeRoute = includeRoute
        self.includeTrail = includeTrail
    }

    /// The bytes to keep as `riderJSON` for a request's `rider` value (compact JSON).
    public static func riderJSON(_ rider: JSONValue) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 64)
        w.value(rider)
        return w.finish()
    }

    /// Writes the trip's fields (PROTOCOL 4 `snapshot`, without `type`, `re`, `recovered`)
    /// into an object the caller has opened; last `last_fix_t`, `battery` and `stale`
    /// (PROTOCOL 18).
    func writeFields(to w: inout JSONWriter) {
        w.field("trip", id)
        guard let trip else {
            w.field("status", TripStatus.unknown.rawValue)
            w.nullField("rider")
            w.nullField("config")
            if includeRoute { w.nullField("route") }
            w.key("waypoints"); w.beginArray(); w.endArray()
            w.nullField("destination")
            w.nullField("position")
            w.nullField("bearing")
            w.nullField("progress")
            w.nullField("done_m")
            w.nullField("remaining_m")
            w.nullField("eta_s")
            w.field("leg", 0)
            if includeTrail { w.key("trail"); w.beginArray(); w.endArray() }
            w.field("last_event", 0)
            w.nullField("last_fix_t")
            w.nullField("battery")
            w.nullField("stale")
            return
        }
        let isStopLink = stopLinkVisibleWithinStops != nil
        // A stop link whose stop the trip no longer has sees no courier, no route, no stop.
        let sight = stopLinkVisibleWithinStops.flatMap { within in stop.flatMap { trip.stopLinkSight($0, visibleWithinStops: within, at: now) } }
        // Past its stop the link sees no courier: its status then reads as while hidden.
        let courierShown = sight.map { $0.shown && !$0.reached } ?? false
        let status = isStopLink ? StopVisibility.status(trip.status, courierShown: courierShown) : trip.status
        w.field("status", status.rawValue)
        let isCustomer = audience == .customer || isStopLink
        w.key("rider")
        if isCustomer {
            Self.writeCustomerRider(&w, riderJSON)
        } else if let riderJSON {
            w.raw(riderJSON)
        } else {
            w.null()
        }
        w.key("config")
        if isCustomer { w.null() } else { trip.config.write(to: &w) }
        if includeRoute {
            w.key("route")
            if isStopLink {
                if let stretch = sight?.route, courierShown { ServerMessages.writeLine(&w, stretch) } else { w.null() }
            } else if let route = trip.route { ServerMessages.writeLine(&w, route.points) } else { w.null() }
        }
        if includeRouteSource && !isCustomer {
            if let source = trip.routeSource { w.field("route_source", source.rawValue) } else { w.nullField("route_source") }
        }
        w.key("waypoints")
        w.beginArray()
        let etas = trip.marker(at: now) == nil ? nil : trip.waypointETAs(now: now)
        for (p, waypoint) in trip.waypoints.enumerated() where !isStopLink || isFollowed(waypoint) {
            w.beginObject()
            w.field("index", waypoint.index)
            w.coordinateField("lat", waypoint.point.lat)
            w.coordinateField("lon", waypoint.point.lon)
            w.field("visited", waypoint.visited)
            writeStopFields(&w, waypoint, eta: etas?[p])
            w.endObject()
        }
        w.endArray()
        w.key("destination")
        ServerMessages.writePoint(&w, isStopLink ? sight?.stopPoint : trip.destination)
        // Nobody follows the rider after the delivery (PROTOCOL 13), nor past a stop link's stop.
        let hidesRider = isCustomer && trip.isOverForCustomers(at: now)
        let marker = isStopLink ? (courierShown ? sight?.marker : nil) : hidesRider ? nil : trip.marker(at: now)
        w.key("position")
        ServerMessages.writePoint(&w, marker?.position)
        w.field("bearing", marker.map { ServerMessages.wireBearing($0.bearingDeg) })
        let info: (progress: Double?, doneM: Double?, remainingM: Double?, etaS: Int?) =
            trip.marker(at: now) == nil ? (nil, nil, nil, nil)
            : stop.map { trip.progressInfo(at: now, toward: $0) } ?? trip.progressInfo(at: now)
        w.field("progress", info.progress.map { ServerMessages.rounded($0, places: 5) })
        w.field("done_m", info.doneM.map { ServerMessages.rounded($0, places: 1) })
        w.field("remaining_m", info.remainingM.map { ServerMessages.rounded($0, places: 1) })
        w.field("eta_s", info.etaS)
        w.field("leg", trip.leg)
        if includeTrail {
            w.key("trail")
            w.beginArray()
            for fix in isCustomer ? [] : trail {
                w.beginArray()
                w.coordinate(fix.lon)
                w.coordinate(fix.lat)
                w.int(fix.ts)
                w.endArray()
            }
            w.endArray()
        }
        w.field("last_event", trip.lastEventNumber)
        // PROTOCOL 18: the courier's signal; a customer does not see the phone's battery.
        w.field("last_fix_t", trip.lastFixT)
        w.field("battery", isCustomer ? nil : trip.battery)
        w.field("stale", trip.isStale)
        if let stop, let progress = trip.stopProgress(stop, now: now) { Self.writeStopObject(&w, progress) }
    }

    /// Whether `waypoint` is the stop this view follows (a stop link shows only that one).
    func isFollowed(_ waypoint: Waypoint) -> Bool {
        guard case .waypoint(let id)? = stop else { return false }
        return waypoint.id == id
    }

    /// A waypoint's PROTOCOL 17 fields: `id`, `name` (null when not given), `dwell_s`, `eta_s`
    /// and `remaining_m` (`eta`: from `Trip.waypointETAs`; nil before the first fix).
    func writeStopFields(_ w: inout JSONWriter, _ waypoint: Waypoint, eta: (remainingM: Double?, etaS: Double?)?) {
        if let id = waypoint.id { w.field("id", id) } else { w.nullField("id") }
        if let name = waypoint.name { w.field("name", name) } else { w.nullField("name") }
        w.field("dwell_s", waypoint.dwellS)
        w.field("eta_s", eta?.etaS.map { Int($0) })
        w.field("remaining_m", eta?.remainingM.map { ServerMessages.rounded($0, places: 1) })
    }

    /// The snapshot's `stop` object `{id, stops_before, eta_s, remaining_m, reached}`.
    static func writeStopObject(_ w: inout JSONWriter, _ progress: StopProgress) {
        w.key("stop")
        w.beginObject()
        w.field("id", progress.id)
        w.field("stops_before", progress.stopsBefore)
        w.field("eta_s", progress.etaS.map { Int($0) })
        w.field("remaining_m", progress.remainingM.map { ServerMessages.rounded($0, places: 1) })
        w.field("reached", progress.reached)
        w.endObject()
    }

    /// A customer's `rider`: `{"name": ...}` from the rider given at creation, nothing else of
    /// it (no `id`, no other field); `null` when it has no string `name`.
    static func writeCustomerRider(_ w: inout JSONWriter, _ riderJSON: [UInt8]?) {
        guard let riderJSON, case .object(let rider)? = try? JSONParser(maxDepth: 16).parse(riderJSON),
              case .string(let name)? = rider["name"] else {
            w.null()
            return
        }
        w.beginObject()
        w.field("name", name)
        w.endObject()
    }
}
