/// What every subscriber sees of the marker at one moment (PROTOCOL `frame` minus trip and seq).
public struct TripFrame: Sendable, Equatable {
    /// Hub time, ms since the epoch.
    public var t: Int64
    /// Where the marker is drawn at `t`.
    public var position: GeoPoint
    /// Degrees clockwise from north, [0, 360).
    public var bearingDeg: Double
    /// done / destination's along distance, 0...1; nil without a route.
    public var progress: Double?
    /// Metres along the route; nil without a route.
    public var doneM: Double?
    /// Metres left to the destination; nil without a route.
    public var remainingM: Double?
    /// Seconds to the destination, rounded up; nil while unknown or slower than 0.5 m/s; 0 once arrived.
    public var etaS: Int?
    /// 0-based leg: the number of visited waypoints.
    public var leg: Int
    /// The trip's status at `t`.
    public var status: TripStatus
    /// True when the marker jumped here instead of sliding (6.2: past the catch-up limit).
    public var jump: Bool

    /// A frame; `jump` false unless the marker is placed without sliding.
    public init(
        t: Int64, position: GeoPoint, bearingDeg: Double, progress: Double?, doneM: Double?,
        remainingM: Double?, etaS: Int?, leg: Int, status: TripStatus, jump: Bool = false
    ) {
        self.t = t
        self.position = position
        self.bearingDeg = bearingDeg
        self.progress = progress
        self.doneM = doneM
        self.remainingM = remainingM
        self.etaS = etaS
        self.leg = leg
        self.status = status
        self.jump = jump
    }
}

/// One animation as a `segment` message minus trip and seq (numbers are the values at the target).
public struct TripSegment: Sendable, Equatable {
    /// Hub time the path starts, ms since the epoch.
    public var t0: Int64
    /// How long the marker takes along `path`, ms (0: placed at once, one-point path).
    public var durationMs: Int64
    /// From the position shown at t0 to the target.
    public var path: [GeoPoint]
    /// `progress` at `t0`, 0...1; nil without a route.
    public var progressFrom: Double?
    /// `progress` at the target, 0...1; nil without a route.
    public var progressTo: Double?
    /// Metres along the route at the target; nil without a route.
    public var doneM: Double?
    /// Metres left to the destination from the target; nil without a route.
    public var remainingM: Double?
    /// Seconds to the destination from the target, rounded up; nil while unknown, 0 once arrived.
    public var etaS: Int?
    /// 0-based leg at the target: the number of waypoints visited.
    public var leg: Int
    /// The trip's status at the target.
    public var status: TripStatus
    /// True for a jump (6.2): `durationMs` 0, a one-point path; shown without sliding.
    public var jump: Bool

    /// A segment; `jump` false unless the marker is placed without sliding.
    public init(
        t0: Int64, durationMs: Int64, path: [GeoPoint], progressFrom: Double?, progressTo: Double?,
        doneM: Double?, remainingM: Double?, etaS: Int?, leg: Int, status: TripStatus, jump: Bool = false
    ) {
        self.t0 = t0
        self.durationMs = durationMs
        self.path = path
        self.progressFrom = progressFrom
        self.progressTo = progressTo
        self.doneM = doneM
        self.remainingM = remainingM
        self.etaS = etaS
        self.leg = leg
        self.status = status
        self.jump = jump
    }
}
