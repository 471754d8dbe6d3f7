import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Who follows which trip, kept both ways: per trip its followers and their mode (what the
/// fan-out reads, once per frame), and per session the trips it follows (`Session.subscriptions`,
/// what a close or a narrower token walks). Every change goes through here, so the two sides
/// always agree. A trip without followers has no entry, so the map holds at most one entry
/// per subscription, and a session has at most `--max-subscriptions` (checked by the caller
/// before it adds one).
struct Subscriptions {
    private var byTrip: [String: [ConnectionID: SubscriptionMode]] = [:]
    /// Per trip, the followers that follow one stop and which (PROTOCOL 17); a trip whose
    /// followers all follow the whole trip has no entry.
    private var stopsByTrip: [String: [ConnectionID: StopRef]] = [:]
    /// Per trip, the followers that are links for one stop (PROTOCOL 17) and what each was last
    /// told: they are among `stopsByTrip` too, but get nothing a `broadcast` sends (only what
    /// `StopLinkFanout` decides). A trip without such followers has no entry.
    private var linksByTrip: [String: [ConnectionID: StopLinkFollower]] = [:]
    /// Subscriptions over all sessions.
    private(set) var count = 0

    /// A trip's followers and their modes (nil: none). Trips that do not exist yet may have some.
    func followers(of trip: String) -> [ConnectionID: SubscriptionMode]? { byTrip[trip] }
    /// A trip's followers that follow one stop, and the stop (nil: none).
    func stopFollowers(of trip: String) -> [ConnectionID: StopRef]? { stopsByTrip[trip] }
    /// The stop a connection's subscription to a trip follows (nil: the whole trip).
    func stop(of id: ConnectionID, trip: String) -> StopRef? { stopsByTrip[trip]?[id] }
    /// A trip's followers that are links for one stop, with their state (nil: none).
    func links(of trip: String) -> [ConnectionID: StopLinkFollower]? { linksByTrip[trip] }
    /// Whether a connection's subscription to a trip watches its courier (PROTOCOL 18): any
    /// subscription does, except a stop link's while the courier is hidden from it (what its
    /// follower last decided, `StopLinkFollower.wasShown`). False without a subscription.
    func watchesCourier(_ id: ConnectionID, trip: String) -> Bool {
        guard byTrip[trip]?[id] != nil else { return false }
        return linksByTrip[trip]?[id]?.wasShown ?? true
    }
    /// Every trip with a stop link following it here.
    var tripsWithLinks: Dictionary<String, [ConnectionID: StopLinkFollower]>.Keys { linksByTrip.keys }
    /// Every trip with a subscriber here.
    var trips: Dictionary<String, [ConnectionID: SubscriptionMode]>.Keys { byTrip.keys }

    /// Subscribes a session to a trip, or changes its mode. True when it is a new subscription.
    /// `link`: the subscription is a link for one stop (its follower state; `stop` must be its stop).
    @discardableResult
    mutating func add(
        _ session: Session, to trip: String, mode: SubscriptionMode, stop: StopRef? = nil, link: StopLinkFollower? = nil
    ) -> Bool {
        let isNew = byTrip[trip, default: [:]].updateValue(mode, forKey: session.id) == nil
        setStop(stop, for: session.id, trip: trip)
        setLink(link, for: session.id, trip: trip)
        session.subscriptions[trip] = mode
        if isNew { count += 1 }
        return isNew
    }

    /// Ends a session's subscription to a trip. False when there was none.
    @discardableResult
    mutating func remove(_ id: ConnectionID, session: Session?, from trip: String) -> Bool {
        guard byTrip[trip]?.removeValue(forKey: id) != nil else { return false }
        if byTrip[trip]?.isEmpty == true { byTrip[trip] = nil }
        setStop(nil, for: id, trip: trip)
        setLink(nil, for: id, trip: trip)
        session?.subscriptions[trip] = nil
        count -= 1
        return true
    }

    /// Records the stop a subscription follows (nil: the whole trip), dropping empty entries.
    private mutating func setStop(_ stop: StopRef?, for id: ConnectionID, trip: String) {
        if let stop {
            stopsByTrip[trip, default: [:]][id] = stop
        } else if stopsByTrip[trip]?.removeValue(forKey: id) != nil, stopsByTrip[trip]?.isEmpty == true {
            stopsByTrip[trip] = nil
        }
    }

    /// Records a stop link's follower state (nil: not a link), dropping empty entries.
    private mutating func setLink(_ link: StopLinkFollower?, for id: ConnectionID, trip: String) {
        if let link {
            linksByTrip[trip, default: [:]][id] = link
        } else if linksByTrip[trip]?.removeValue(forKey: id) != nil, linksByTrip[trip]?.isEmpty == true {
            linksByTrip[trip] = nil
        }
    }

    /// Stores what a stop link was told (its follower after a decision); ignored when the
    /// subscription is gone meanwhile.
    mutating func updateLink(_ link: StopLinkFollower, for id: ConnectionID, trip: String) {
        guard linksByTrip[trip]?[id] != nil else { return }
        linksByTrip[trip]?[id] = link
    }
}
