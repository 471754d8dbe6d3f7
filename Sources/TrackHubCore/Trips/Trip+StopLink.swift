/// What a link for one stop may see of a trip at one moment (PROTOCOL 17 "A link for one
/// stop"): the privacy rules of `StopVisibility` applied to the trip's state. A function of
/// the trip alone, so every hub of a cluster computes the same.
public struct StopLinkSight: Sendable, Equatable {
    /// Unvisited waypoints before the followed stop.
    public var stopsBefore: Int
    /// True once the followed stop was reached (its `waypoint_reached`, or `arrived`).
    public var reached: Bool
    /// Whether the courier is shown: a marker, few enough stops before, clear of every other
    /// waypoint.
    public var shown: Bool
    /// The marker while shown; nil while hidden.
    public var marker: MarkerSample?
    /// The followed stop's point (the snapshot's `destination` for the link).
    public var stopPoint: GeoPoint
    /// The stretch of the route the link may see (`StopVisibility.routeStretch`); nil while
    /// hidden, without a route, or once the marker is past the stop.
    public var route: [GeoPoint]?
    /// The status the link reads (`StopVisibility.status`).
    public var status: TripStatus
    /// Every other waypoint's point, visited or not: what nothing shown may come near.
    public var otherStops: [GeoPoint]

    /// A sight as given (`Trip.stopLinkSight` computes the real one; tests make their own).
    public init(stopsBefore: Int, reached: Bool, shown: Bool, marker: MarkerSample?, stopPoint: GeoPoint,
                route: [GeoPoint]?, status: TripStatus, otherStops: [GeoPoint]) {
        self.stopsBefore = stopsBefore
        self.reached = reached
        self.shown = shown
        self.marker = marker
        self.stopPoint = stopPoint
        self.route = route
        self.status = status
        self.otherStops = otherStops
    }
}

extension Trip {
    /// What a link following `stop` (a waypoint id, or the destination) sees at `now`; nil when
    /// the trip has no such stop. `withRoute: false` leaves `route` nil: the live side decides
    /// on every tick whether the courier is shown, and only a snapshot draws the stretch.
    public func stopLinkSight(_ stop: StopRef, visibleWithinStops: Int, at now: Int64, withRoute: Bool = true) -> StopLinkSight? {
        switch stop {
        case .destination:
            return stopLinkSight(waypointIndex: nil, visibleWithinStops: visibleWithinStops, at: now, withRoute: withRoute)
        case .waypoint(let id):
            guard let waypoint = waypoints.first(where: { $0.id == id }) else { return nil }
            return stopLinkSight(waypointIndex: waypoint.index, visibleWithinStops: visibleWithinStops, at: now, withRoute: withRoute)
        }
    }

    /// What a link following the waypoint with stable `index` `waypointIndex` (nil: the
    /// destination) sees at `now`, showing the courier from `visibleWithinStops` stops before
    /// its own. Nil when the trip has no such stop; `route` nil unless `withRoute`.
    public func stopLinkSight(waypointIndex: Int?, visibleWithinStops: Int, at now: Int64, withRoute: Bool = true) -> StopLinkSight? {
        let stopsBefore: Int, reached: Bool, stopPoint: GeoPoint, stopAlongM: Double?
        var otherStops: [GeoPoint] = []
        if let waypointIndex {
            guard let p = waypoints.firstIndex(where: { $0.index == waypointIndex }) else { return nil }
            stopsBefore = max(0, p - visitedCount)
            reached = waypoints[p].visited || p == holdingPosition
            stopPoint = waypoints[p].point
            stopAlongM = waypoints[p].alongM
            for (q, waypoint) in waypoints.enumerated() where q != p { otherStops.append(waypoint.point) }
        } else {
            guard let destination else { return nil }
            stopsBefore = unvisitedWaypointCount
            reached = arrivedAt != nil
            stopPoint = destination
            stopAlongM = destinationAlongM
            otherStops = waypoints.map(\.point)
        }
        let sample = marker(at: now)
        let shown = StopVisibility.isShown(
            marker: sample?.position, stopsBefore: stopsBefore, visibleWithinStops: visibleWithinStops, otherStops: otherStops)
        var stretch: [GeoPoint]?
        if withRoute, shown, let route, let stopAlongM {
            stretch = StopVisibility.routeStretch(
                route: route, markerAlongM: alongDistance(of: sample), stopAlongM: stopAlongM, otherStops: otherStops)
        }
        return StopLinkSight(
            stopsBefore: stopsBefore, reached: reached, shown: shown, marker: shown ? sample : nil, stopPoint: stopPoint,
            route: stretch, status: StopVisibility.status(status, courierShown: shown), otherStops: otherStops)
    }
}
