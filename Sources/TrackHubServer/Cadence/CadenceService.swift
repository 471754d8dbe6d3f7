import TrackHubLWS
import TrackHubProtocol

/// Cadence (PROTOCOL 18, "the hub asks for what it needs"): a courier is asked for a fix every
/// `--cadence-watched` while somebody watches its trip, else every `--cadence-idle`, because
/// sending is what empties a phone's battery.
///
/// A trip is watched while at least one subscriber follows it, except a subscription on a
/// connection that sends the trip's fixes (a courier watching its own trip) and a link for one
/// stop while the courier is hidden from it (PROTOCOL 17: its customer sees no marker, so
/// nobody needs it fresh); in a cluster, while any hub has such a subscriber
/// (`watchedElsewhere`, exchanged through Redis within 5 s: each hub publishes the trips
/// watched by this same rule, so a hidden link on another hub counts nowhere).
///
/// What it sends, and when:
/// - after a fix sent on a WebSocket is acked, `cadence` on that connection when what it
///   would say differs from the last one sent there for that trip (none yet counts);
/// - when a trip becomes watched or unwatched, `cadence` at once on the connection that sent
///   the trip's latest fix, if it is still open (`Fanout.followersChanged` for this hub's
///   subscribers, a stop link's courier becoming shown or hidden included, which
///   `StopLinkFanout` decides at each tick, segment, event batch and twice-a-second sweep;
///   the cluster's exchange, at housekeeping, for other hubs');
/// - to an OwnTracks phone bound to a trip, in the answer to its location, OwnTracks's
///   `setConfiguration` when the interval differs from the last one told to that device.
///
/// It learns of subscriptions from `Fanout` (`followersChanged`, `sessionRemoved`), of fixes
/// from `Replies` (the ack path both command logs share), and keeps what it asked for the
/// stale judgement (`longestAskedIntervalMs`).
///
/// Threads: the service thread only. Bounds: `CourierConnections` (senders per trip, trips per
/// connection), `AskedIntervals` (2 entries per trip, a cap on trips), `watchedHere` (one
/// entry per trip with a subscriber: at most the subscriptions), `devicesTold` (at most
/// `maxDevicesTold`; past it one is forgotten and told again at its next location).
final class CadenceService {
    /// Devices remembered with the interval last told (past it: one is forgotten).
    static let maxDevicesTold = 100_000
    /// How often what fell out of `AskedIntervals`' window is dropped.
    static let pruneEveryMs: Int64 = 10_000

    /// The other hubs' watched trips, as the cluster's exchange last read them.
    struct Elsewhere: Sendable {
        /// Trips watched on some other hub (by `isWatchedHere`'s rule there).
        var trips: Set<String>
        /// Changes whenever `trips` does (so an unchanged set is not compared again).
        var version: UInt64
    }

    /// False with `--cadence-idle 0`: nothing is sent, nothing is asked.
    let isEnabled: Bool
    /// Trips with a follower on this hub that watches their courier (`isWatchedHere`).
    private(set) var watchedHere: Set<String> = []
    /// Changes whenever `watchedHere` does (the cluster's exchange publishes on change only).
    private(set) var watchedHereVersion: UInt64 = 0
    /// Exchanges this hub's watched trips for the other hubs' (the cluster's log sets it in
    /// `HubServices.connect`; nil, or answering nil: a hub alone).
    var exchangeWatched: ((_ here: Set<String>, _ version: UInt64, _ now: Int64) -> Elsewhere?)?

    private let watchedMs: Int64
    private let idleMs: Int64
    private let fanout: Fanout
    private let metrics: HubMetrics
    private let clock: HubClock
    private var couriers = CourierConnections()
    private var elsewhere = Elsewhere(trips: [], version: 0)
    private var asked = AskedIntervals()
    private var lastPrune: Int64 = 0
    /// Per OwnTracks device, the interval last told.
    private var devicesTold: [String: Int64] = [:]

    init(config: HubConfig, fanout: Fanout, metrics: HubMetrics, clock: HubClock) {
        isEnabled = config.cadenceEnabled
        watchedMs = config.cadenceWatchedMs
        idleMs = config.cadenceIdleMs
        self.fanout = fanout
        self.metrics = metrics
        self.clock = clock
    }

    /// True while `trip` is watched on this hub or, in a cluster, on another.
    func isWatched(_ trip: String) -> Bool {
        watchedHere.contains(trip) || elsewhere.trips.contains(trip)
    }

    /// The interval wanted of `trip`'s courier now, ms.
    func wantedIntervalMs(_ trip: String) -> Int64 { isWatched(trip) ? watchedMs : idleMs }

    /// The longest interval the hub asked of `trip`'s courier in the last 2 minutes, ms (the
    /// one in force then counts even if it was asked earlier); 0 with cadence off or when
    /// nothing was asked (PROTOCOL 18's stale rule: `2 × this` is one of its floors). What
    /// this hub asked: in a cluster, the hub holding the courier's connection.
    func longestAskedIntervalMs(trip: String, now: Int64) -> Int64 {
        isEnabled ? asked.longest(trip, now: now) : 0
    }

    /// Trips with asked intervals remembered (tests: the history is pruned).
    var askedTripCount: Int { asked.tripCount }

    // MARK: - What it hears

    /// `trip` gained or lost a follower on this hub, or a stop link of it started or stopped
    /// showing the courier (`Fanout.followersChanged`).
    func followersChanged(of trip: String) {
        guard isEnabled else { return }
        refreshWatchedHere(trip)
    }

    /// Fixes of `trip` sent on the WebSocket `id` were acked (just queued): `id` is the trip's
    /// courier now; it is sent `cadence` when that would say something new to it.
    func fixesAcked(trip: String, on id: ConnectionID) {
        // A connection that closed before its ack was answered sends nothing any more.
        guard isEnabled, let session = fanout[id], !session.isClosing else { return }
        let now = clock.wallMillis()
        if couriers.noteFix(of: trip, from: id, now: now) {
            refreshWatchedHere(trip)  // its own subscription no longer counts as a watcher
        }
        tell(id, about: trip, now: now)
    }

    /// The interval to tell an OwnTracks device bound to `trip` in the answer to its location:
    /// the wanted one when it differs from the last told to `device` (none yet counts), else
    /// nil. Counted as sent: the caller puts it in the answer.
    func intervalToTell(device: String, trip: String) -> Int64? {
        guard isEnabled else { return nil }
        let now = clock.wallMillis()
        let wanted = wantedIntervalMs(trip)
        let previous = devicesTold[device]
        asked.record(trip, intervalMs: previous ?? wanted, now: now)  // in force until now
        guard previous != wanted else { return nil }
        if previous == nil && devicesTold.count >= Self.maxDevicesTold, let any = devicesTold.keys.first {
            devicesTold[any] = nil
        }
        devicesTold[device] = wanted
        asked.record(trip, intervalMs: wanted, now: now)
        metrics.cadenceMessages += 1
        return wanted
    }

    /// A session went (`Fanout.sessionRemoved`, after its subscriptions did): it sends nothing
    /// any more, and its trips' watchers are counted without it.
    func sessionRemoved(_ id: ConnectionID) {
        guard isEnabled else { return }
        let now = clock.wallMillis()
        for (trip, told) in couriers.remove(id) {
            if let told { asked.record(trip, intervalMs: told.intervalMs, now: now) }  // in force until now
            refreshWatchedHere(trip)
        }
    }

    /// Every 500 ms or so (the hub's housekeeping): the cluster's exchange of watched trips
    /// (couriers whose trip another hub started or stopped watching are told), and the asked
    /// intervals that fell out of their window are dropped.
    func housekeeping(now: Int64) {
        guard isEnabled else { return }
        if now - lastPrune >= Self.pruneEveryMs {
            lastPrune = now
            asked.prune(now: now)
        }
        guard let latest = exchangeWatched?(watchedHere, watchedHereVersion, now), latest.version != elsewhere.version else { return }
        let changed = latest.trips.symmetricDifference(elsewhere.trips)
        elsewhere = latest
        for trip in changed where !watchedHere.contains(trip) { tellCourier(of: trip, now: now) }
    }

    // MARK: - The rule

    /// Whether `trip` has a follower on this hub that watches its courier: not one that sends
    /// its fixes, nor a stop link the courier is hidden from (`Subscriptions.watchesCourier`).
    private func isWatchedHere(_ trip: String) -> Bool {
        guard let followers = fanout.subscriptions.followers(of: trip) else { return false }
        let senders = couriers.senders(of: trip)
        let subscriptions = fanout.subscriptions
        if subscriptions.links(of: trip) == nil, followers.count > senders.count {
            return true  // some follower is not a sender, and none is a stop link
        }
        return followers.keys.contains { !senders.contains($0) && subscriptions.watchesCourier($0, trip: trip) }
    }

    /// Recomputes whether `trip` is watched here; when that changed, its courier is told.
    private func refreshWatchedHere(_ trip: String) {
        let watched = isWatchedHere(trip)
        guard watched != watchedHere.contains(trip) else { return }
        if watched { watchedHere.insert(trip) } else { watchedHere.remove(trip) }
        watchedHereVersion &+= 1
        tellCourier(of: trip, now: clock.wallMillis())
    }

    // MARK: - Telling

    /// Tells the connection that sent `trip`'s latest fix, if it is still open.
    private func tellCourier(of trip: String, now: Int64) {
        guard let id = couriers.courier(of: trip) else { return }
        tell(id, about: trip, now: now)
    }

    /// Sends `cadence` for `trip` on `id` when it would differ from the last one sent there.
    private func tell(_ id: ConnectionID, about trip: String, now: Int64) {
        let watched = isWatched(trip)
        let wanted = CourierConnections.Told(intervalMs: watched ? watchedMs : idleMs, watched: watched)
        let previous = couriers.told(trip, on: id)
        if let previous { asked.record(trip, intervalMs: previous.intervalMs, now: now) }  // in force until now
        guard previous != wanted, let session = fanout[id], !session.isClosing else { return }
        fanout.enqueue(payload: ServerMessages.cadence(trip: trip, intervalMs: wanted.intervalMs, watched: watched), to: id)
        couriers.setTold(wanted, trip, on: id)
        asked.record(trip, intervalMs: wanted.intervalMs, now: now)
        metrics.cadenceMessages += 1
    }
}
