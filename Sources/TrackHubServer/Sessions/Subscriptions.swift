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
    /// Subscriptions over all sessions.
    private(set) var count = 0

    /// A trip's followers and their modes (nil: none). Trips that do not exist yet may have some.
    func followers(of trip: String) -> [ConnectionID: SubscriptionMode]? { byTrip[trip] }
    /// Every trip with a subscriber here.
    var trips: Dictionary<String, [ConnectionID: SubscriptionMode]>.Keys { byTrip.keys }

    /// Subscribes a session to a trip, or changes its mode. True when it is a new subscription.
    @discardableResult
    mutating func add(_ session: Session, to trip: String, mode: SubscriptionMode) -> Bool {
        let isNew = byTrip[trip, default: [:]].updateValue(mode, forKey: session.id) == nil
        session.subscriptions[trip] = mode
        if isNew { count += 1 }
        return isNew
    }

    /// Ends a session's subscription to a trip. False when there was none.
    @discardableResult
    mutating func remove(_ id: ConnectionID, session: Session?, from trip: String) -> Bool {
        guard byTrip[trip]?.removeValue(forKey: id) != nil else { return false }
        if byTrip[trip]?.isEmpty == true { byTrip[trip] = nil }
        session?.subscriptions[trip] = nil
        count -= 1
        return true
    }
}
