/// How a simulation behaves. Durations in seconds are device (real-world) time: at
/// `speedup` X they pass X times faster on the wall clock.
public struct SimulationSettings: Sendable {
    /// Concurrent riders.
    public var riders = 20
    /// How much faster than real time riders move.
    public var speedup = 1.0
    /// Seed of every random choice.
    public var seed: UInt64 = 1
    /// The hub's allowed clock skew (PROTOCOL 1, `--max-clock-skew`), ms.
    public var maxClockSkewMs: Int64 = 300_000
    /// Kept free of the skew for clock differences between this machine and the hub's, ms.
    public var skewMarginMs: Int64 = 30_000
    /// Via points per synthetic trip.
    public var waypointsPerTrip = 1...2
    /// `simulate --stops N`: every synthetic trip is a multi-stop delivery with exactly N
    /// stops (PROTOCOL 17: waypoints with an `id`, a `name` and a planned `dwell_s`) instead
    /// of `waypointsPerTrip` anonymous via points; nil: the via points as before.
    public var stopsPerTrip: Int?
    /// With `stopsPerTrip`: a customer follows each stop as the customer's page does, through
    /// the stop's share link (PROTOCOL 17; on an open hub, which issues no links, with
    /// `subscribe {stop}`); false (`simulate --no-stop-links`): nobody does.
    public var followsStopLinks = true
    /// The links' `visible_within_stops`: the courier is shown to a customer once at most this
    /// many stops are left before theirs.
    public var linkVisibleWithinStops = 1
    /// The planned dwell of a stop (device seconds, drawn per stop): the courier waits that
    /// long after the hub confirms the stop, then sends `proceed`.
    public var stopDwellS = 30.0...180.0
    /// Chance that a trip has an off-route excursion.
    public var excursionProbability = 0.5
    /// Chance that a trip is rerouted.
    public var rerouteProbability = 0.4
    /// Share of synthetic trips on Helsinki graph routes (the others use the fixed routes).
    public var graphRouteShare = 0.7
    /// Share of Helsinki graph trips created from their stops alone (`origin`, waypoints,
    /// `destination`) for the hub's router to route (PROTOCOL 16; needs `serve --router`).
    /// 0: every trip gives its route.
    public var fromStopsShare = 0.0
    /// Every n-th rider replays a recorded trace instead (0: none).
    public var traceRiderEvery = 10
    /// Device seconds between fixes.
    public var fixIntervalS = 1.0...3.0
    /// GPS noise: the standard deviation of a fix's offset from the true position, metres.
    public var noiseSigmaM = 2.5
    /// The cap on that offset, metres.
    public var noiseMaxM = 6.0
    /// The accuracy every fix reports, metres.
    public var accuracyM = 5.0
    /// Device seconds a rider waits at a via point (a pickup) after the hub confirms it.
    public var dwellS = 15.0...45.0
    /// Device seconds a rider waits at the destination, after `arrived`, before ending the trip.
    public var arrivalDwellS = 5.0...20.0
    /// Device seconds between one trip's end (or a failed creation) and the next trip.
    public var pauseBetweenTripsS = 3.0...15.0
    /// How long a rider waits for the hub to confirm a via point or arrival before giving up
    /// on the trip (device seconds).
    public var confirmTimeoutS = 180.0
    /// Metres before a via point or the destination that no fix may land in: a fix there
    /// would let the hub's marker reach the stop before the rider has stopped.
    public var approachZoneM = 70.0

    /// How fixes are sent (default: the WebSocket `fix` op).
    public var fixProtocol: FixProtocol = .trackhub
    /// Synthetic riders send at the interval the hub asks for (PROTOCOL 18: a `cadence`
    /// message, or OwnTracks's `setConfiguration` in its answer) once it has asked, in their
    /// own (device) time like everything they do, instead of every `fixIntervalS`; false
    /// (`simulate --ignore-cadence`): always `fixIntervalS`, the old fixed rate. Replays keep
    /// their recorded pace either way.
    public var followsCadence = true

    /// Every setting at its default above (20 riders, real time, seed 1); `trackhub simulate`
    /// starts from these and applies its flags.
    public init() {}

    /// What the hub's `ts` rule leaves for a device clock running ahead, ms.
    var skewBudgetMs: Int64 { max(0, maxClockSkewMs - skewMarginMs) }
}
