import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Where the answer to a command goes once its change is durable.
enum Reply: Sendable {
    case webSocket(ConnectionID, MessageID?)
    case http(ConnectionID)
    /// A phone app's request (PROTOCOL 11): answered in that app's own form. `device`: the
    /// registered device that sent it (its answer may carry what the hub asks of it, 18).
    case device(ConnectionID, DeviceFix.Source, device: String)
}

/// A change to a trip, checked as far as the request alone allows (PROTOCOL 4 and 5): what
/// a client asks for, over HTTP or the WebSocket, in one form for both command logs.
enum TripCommand: Sendable {
    /// `id` is chosen before submitting (the request's, or a fresh one). `found`: the route
    /// came from the hub's router (PROTOCOL 16), with its travel time; nil: the client's.
    case create(id: String, CreateTripRequest, route: Route?, rawBody: [UInt8], found: RouterTravel?)
    case fixes(trip: String, [FixInput])
    case proceed(trip: String)
    /// `reason`: a client's `PUT`, or the hub's own reroute of a trip off its route.
    case route(trip: String, RerouteRequest, route: Route, rawBody: [UInt8], reason: RerouteReason, found: RouterTravel?)
    case end(trip: String)

    var trip: String {
        switch self {
        case .create(let id, _, _, _, _): return id
        case .fixes(let trip, _), .proceed(let trip), .route(let trip, _, _, _, _, _), .end(let trip): return trip
        }
    }
}

/// What the router said of a route it found (PROTOCOL 16), carried with the command so that
/// every hub of a cluster shows the same ETA.
struct RouterTravel: Sendable, Equatable {
    /// The router's travel time for the whole route, seconds.
    var durationS: Double
}

/// The readiness a command log reports for `/healthz` (PROTOCOL 9).
enum CommandLogHealth: Sendable, Equatable {
    case ok
    /// It cannot make commands durable now.
    case unavailable
    /// It is still replaying what others wrote (a cluster node starting).
    case catchingUp
    /// It works, but needs an operator's look (a cluster partition's log past 2 000 000
    /// entries: its snapshots stalled); `/healthz` 200 `degraded` (PROTOCOL 15).
    case degraded
}

/// Where trip, device and share link commands become durable, in one order per trip (and per
/// device), and the clock trips advance on: the three roles below, which each backend plays.
///
/// - `LocalCommandLog`: one hub alone. A command is judged on arrival and its result
///   written to the trip store (SQLite); it is answered after the commit.
/// - `RedisCommandLog`: a cluster. A command is appended to a Redis stream first; every node
///   applies the stream in order with the entry's time as the clock, and the node that
///   appended it answers once it applies it.
///
/// Everything is called on the hub's service thread.
typealias CommandLog = CommandDurability & TripSchedule & CommandLogOperations

/// What clients' commands rely on (PROTOCOL 7): a command is answered, and its effect shown,
/// only once it is durable; a command that could not be made durable is answered
/// `unavailable` and changes nothing a client has seen. In a cluster (PROTOCOL 15), a
/// request about a trip, device or link this hub has not applied yet waits until it has, or
/// is answered `unavailable`; it is never answered from a state older than the request.
protocol CommandDurability: AnyObject {
    /// Takes a command. `reply` nil: the hub's own (an arrived trip's end), nobody waits.
    func submit(_ command: TripCommand, reply: Reply?, now: Int64)
    /// Takes a device change (PROTOCOL 11); `reply` gets the device as it then is
    /// (`DeviceService.answerDevice`) once the change is durable, 404 for a `delete` of a device not
    /// registered, `unavailable` when it cannot be made durable. Every hub sharing the log
    /// ends up with the same device table.
    func submit(_ command: DeviceCommand, reply: Reply, now: Int64)
    /// Takes a share link change (PROTOCOL 13); `reply` gets the link's token
    /// (`ShareService.answerShareIssued`) or the revocation (`ShareService.answerShareRevoked`) once the change
    /// is durable, 404 for a revocation of a link not known (or expired), `unavailable` when it
    /// cannot be made durable. Every hub sharing the log ends up with the same links, and ends
    /// a revoked link's subscriptions (`ShareService.revokeShareHere`).
    func submit(_ command: ShareCommand, reply: Reply, now: Int64)
    /// A fix from registered `device`: it becomes the device's `last_seen` and
    /// `last_position` and, with `trip` (the device's active trip), a fix of that trip,
    /// answered as `submit` answers a fix; without one it is answered (`Replies.respondDevice`)
    /// once that sighting is durable.
    func submitDeviceFix(_ fix: FixInput, device: String, trip: String?, reply: Reply, now: Int64)
    /// Runs `then` once this hub has applied every command made durable before `t` (at once on
    /// a hub alone, which applies a command before anyone hears of it). A request naming a
    /// trip or device this hub does not know uses it to tell "not applied here yet" (made on
    /// another hub a moment ago) from "does not exist". If the hub cannot get that far soon,
    /// the log answers `reply` `unavailable` instead and `then` never runs.
    func afterApplying(upTo t: Int64, reply: Reply, _ then: @escaping () -> Void)
    /// A request about `trip` (a subscriber, a courier, any call naming it): runs `then` once
    /// this hub applies the trip's partition up to the request's arrival (at once on a hub
    /// alone, and in a cluster when the partition is applied here already). If that cannot
    /// happen soon, the log answers `reply` `unavailable` instead and `then` never runs.
    func usingTrip(_ trip: String, reply: Reply, now: Int64, _ then: @escaping () -> Void)
    /// Runs `then` once every write whose command was answered is readable in the trip store
    /// (a trail read must show every acked fix).
    func afterAnsweredWrites(_ then: @escaping @Sendable () -> Void)
    /// A connection closed: answers still owed to it are dropped.
    func connectionClosed(_ id: ConnectionID)
    /// True while commands wait for their answer (the drain waits for them).
    var hasUnansweredCommands: Bool { get }
    /// True when every command is applied here before anyone hears of it (a hub alone), so
    /// a trip or device this hub does not know does not exist; false where another hub's
    /// command may still be on its way (a cluster: use `afterApplying`).
    var appliesCommandsOnArrival: Bool { get }
}

/// The clock moving trips advance on (PROTOCOL 6.3): one frame per trip per tick, every hub
/// of a cluster ticking a trip at the same log times, so frames with the same `t` are the
/// same on every hub.
protocol TripSchedule: AnyObject {
    /// One sub-tick: the frames due of the trips that move, on this log's clock.
    func advanceTrips(now: Int64)
    /// A fix or a command gave `trip` a new segment: it moves now (joins the tick schedule).
    /// `byFix`: a courier's fix did, so the trip's phase may follow the courier's cadence
    /// (`TickSchedule.follow`).
    func tripStartedMoving(_ trip: String, at t: Int64, byFix: Bool)
    /// Trips in the tick schedule.
    var movingTripCount: Int { get }
}

/// Running the log: start and stop, housekeeping, health and metrics, and what the rest
/// of the hub reads from it (the fleet's markers, where webhook positions are kept). None
/// of these answers a client's command, so none carries PROTOCOL 7's guarantee.
protocol CommandLogOperations: AnyObject {
    /// Loads what the log holds into the hub's trip, device and share link tables (start-up,
    /// before the port opens).
    func restore() throws
    /// Starts and stops the log's own threads (with the service thread).
    func startThreads()
    func stopThreads()
    /// Housekeeping (every 500 ms or so): arrived trips to end, expired requests, snapshots.
    func housekeeping(now: Int64)
    /// Readiness for `/healthz` (PROTOCOL 9).
    func health(now: Int64) -> CommandLogHealth
    /// Whether a trip's recent events are kept in memory (for snapshots of the log).
    var keepsRecentEvents: Bool { get }
    /// Lines for `/metrics` (Prometheus text), empty for none.
    func metricsText(now: Int64) -> String
    /// Where webhook delivery positions are kept (PROTOCOL 12), and which trips' webhooks
    /// this node delivers (nil: all; a cluster: its partitions', PROTOCOL 15).
    func webhookPositions() -> (keeper: any WebhookPositionKeeper, scope: WebhookScope?)
    /// The fleet's markers (PROTOCOL 8) from this hub's own trips: what the fleet view
    /// shows (a cluster: every partition's latest published positions, PROTOCOL 15).
    func fleetMembers(_ local: [FleetMember], now: Int64) -> [FleetMember]
    /// The trips watched on the other hubs of a cluster (PROTOCOL 18: "in cluster mode on any
    /// hub, known to the others within 5 s"), given this hub's own (`here`, which changes
    /// whenever `version` does); nil for a hub alone.
    func watchedElsewhere(_ here: Set<String>, version: UInt64, now: Int64) -> CadenceService.Elsewhere?
}
