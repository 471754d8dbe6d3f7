import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubRouting

/// The hub's components, one of each, built and wired to each other here, once: the trip
/// table and the store's paths, delivery (fan-out, publishing, answers), the tick, and the
/// feature services (fleet, access, routes, devices, share links, the trips' HTTP API).
/// All of them live on the hub's service thread.
///
/// The command log is given these, never the hub: it reads and changes trips, persists,
/// publishes and answers through them, and the hub drives both. Calls go one way: the
/// services that submit commands (devices, share links, the trips' API, route searches, the
/// fleet's markers) hold the log weakly, handed to them by `connect(to:)`.
struct HubServices {
    /// The settings the hub was started with.
    let config: HubConfig
    /// Every rule's notion of now.
    let clock: HubClock
    /// The sockets.
    let host: any ServerHost
    /// The counters of `/metrics`.
    let metrics: HubMetrics
    /// Work other threads hand to the service thread.
    let inbox: ServiceThreadInbox
    /// The trips, their animation schedule and what goes with each (one owner: see TripTable).
    let trips: TripTable
    /// Store batches and reads, answered back on the service thread.
    let storage: TripStorage
    /// The open WebSocket sessions, who follows which trip, and every write to them.
    let fanout: Fanout
    /// How often couriers are asked for fixes: who watches each trip (PROTOCOL 18).
    let cadence: CadenceService
    /// Every answer to a request, in its door's form.
    let replies: Replies
    /// What subscribers (and webhooks) are sent when a trip changes.
    let publisher: TripPublisher
    /// Ticks the moving trips (a hub alone; a cluster ticks on its log's grid).
    let animator: TripAnimator
    /// The fleet channel (PROTOCOL 8): the viewports watched and the clustering index.
    let fleet: FleetService
    /// Who may do what: tokens, the `/v1` gate, Origins and Hosts, refusals per address and
    /// the token rules of live sessions (PROTOCOL 1, 2, 4).
    let access: AccessControl
    /// The routes the hub finds on the router's queue (PROTOCOL 16).
    let routes: RouteSearches
    /// Registered phones (PROTOCOL 11): their table, `/v1/devices` and a phone's fix.
    let devices: DeviceService
    /// Share links (PROTOCOL 13): issued and revoked, and the sharing they end.
    let shares: ShareService
    /// The trips of the HTTP API: the list, a trip, its trail, a carried-out command's answer.
    let tripsAPI: TripsAPI
    /// Trips whose courier fell silent (PROTOCOL 18): found, and `signal_lost` sent.
    let signals: SignalWatch

    /// Builds every component over `backends` and wires them to each other.
    init(config: HubConfig, backends: HubBackends, clock: HubClock) {
        self.config = config
        self.clock = clock
        host = backends.host
        metrics = HubMetrics()
        inbox = ServiceThreadInbox(host: host)
        trips = TripTable(tickHz: config.tickHz)
        storage = TripStorage(store: backends.store, trips: trips, inbox: inbox, metrics: metrics)
        fanout = Fanout(host: host, policy: AccessControl.sessionPolicy(for: config), clock: clock)
        cadence = CadenceService(config: config, fanout: fanout, metrics: metrics, clock: clock)
        replies = Replies(host: host, fanout: fanout, metrics: metrics, cadence: cadence)
        publisher = TripPublisher(trips: trips, fanout: fanout, storage: storage, metrics: metrics, clock: clock)
        animator = TripAnimator(trips: trips, publisher: publisher, metrics: metrics, inbox: inbox, host: host, clock: clock, tickHz: config.tickHz)
        fleet = FleetService(config: config, clock: clock, trips: trips, fanout: fanout, replies: replies, metrics: metrics, inbox: inbox)
        access = AccessControl(config: config, clock: clock, fanout: fanout, trips: trips, fleet: fleet)
        routes = RouteSearches(
            config: config, router: backends.router, clock: clock, trips: trips, replies: replies, metrics: metrics, inbox: inbox)
        devices = DeviceService(
            trips: trips, replies: replies, metrics: metrics, storage: storage, maxFixRate: config.maxFixRate, isSecured: access.isSecured)
        shares = ShareService(
            links: access.tokens.shares, secrets: access.tokens.secrets, trips: trips, fanout: fanout, replies: replies,
            storage: storage, clock: clock)
        tripsAPI = TripsAPI(
            trips: trips, storage: storage, replies: replies, fanout: fanout, host: host, clock: clock,
            serverName: TrackHubVersion.serverName, maxTrips: config.maxTrips, maxRoutePoints: config.maxRoutePoints)
        signals = SignalWatch(rule: StaleRule(staleAfterMs: config.staleAfterMs), trips: trips, publisher: publisher)
        // Unowned: these services live exactly as long as the hub that holds them all.
        routes.checkTripCapacity = { [unowned tripsAPI] () throws(ProtocolError) in try tripsAPI.checkTripCapacity() }
        publisher.endCustomerSubscriptionsIfOver = { [unowned shares] trip, now in shares.endCustomerSubscriptionsIfOver(trip: trip, now: now) }
        fanout.followersChanged = { [unowned cadence] trip in cadence.followersChanged(of: trip) }
        fanout.framesWanted = { [unowned trips] trip in trips.animating.wake(trip) }
        fanout.sessionRemoved = { [unowned cadence] id in cadence.sessionRemoved(id) }
        // PROTOCOL 18: a courier following an idle cadence is not silent: twice the longest
        // interval asked of it lately is one of the stale rule's floors.
        signals.longestAskedIntervalMs = { [unowned cadence] trip, now in cadence.longestAskedIntervalMs(trip: trip, now: now) }
    }

    /// Hands `log` to the services that submit commands or read from it. Weak: the hub owns
    /// the log, and a router search's answer (held by the router's queue) may come back
    /// after the hub has gone.
    func connect(to log: any CommandLog) {
        publisher.keepsRecentEvents = log.keepsRecentEvents
        devices.commandLog = log
        shares.commandLog = log
        tripsAPI.commandLog = log
        fleet.fleetMembers = { [weak log] local, now in log?.fleetMembers(local, now: now) ?? local }
        routes.submit = { [weak log] command, reply, now in log?.submit(command, reply: reply, now: now) }
        cadence.exchangeWatched = { [weak log] here, version, now in log?.watchedElsewhere(here, version: version, now: now) }
    }
}
