import TrackHubLWS

/// Which WebSocket connections send each trip's fixes, and the last `cadence` each was sent
/// for it (PROTOCOL 18). A connection becomes a trip's sender when a fix of that trip it sent
/// is acked; the most recent one is the trip's courier, told when the trip becomes watched
/// or unwatched.
///
/// Bounds: at most `maxSendersPerTrip` connections per trip (past it the one that sent least
/// recently is forgotten as that trip's sender) and `maxTripsPerConnection` trips per
/// connection (past it the trip it sent least recently is forgotten). Either way the cost is
/// small and safe: a forgotten sender's own subscription to the trip counts as a watcher
/// again, and it may be sent one `cadence` it already had. Everything of a connection goes
/// when it closes.
struct CourierConnections {
    /// Connections remembered as senders of one trip (several phones may share a trip).
    static let maxSendersPerTrip = 4
    /// Trips remembered per connection (one app may send for many trips: a load generator).
    static let maxTripsPerConnection = 1024

    /// What a connection was last told of a trip.
    struct Told: Equatable {
        var intervalMs: Int64
        var watched: Bool
    }

    /// One connection's part in one trip.
    private struct Sending {
        /// When its last fix of the trip was acked (which of its trips is least recent).
        var lastAckAt: Int64
        /// The last `cadence` sent to it for the trip; nil: none yet.
        var told: Told?
    }

    /// Per connection, the trips it sends.
    private var byConnection: [ConnectionID: [String: Sending]] = [:]
    /// Per trip, the connections that send it, least recent first (the last one: its courier).
    private var byTrip: [String: [ConnectionID]] = [:]

    /// The connections that send `trip`'s fixes (empty: none).
    func senders(of trip: String) -> [ConnectionID] { byTrip[trip] ?? [] }

    /// The connection that sent `trip`'s latest acked fix.
    func courier(of trip: String) -> ConnectionID? { byTrip[trip]?.last }

    /// A fix of `trip` sent on `id` was acked at `now`: `id` is now the trip's courier.
    /// True when `id` was not yet one of the trip's senders (who counts as a watcher changed).
    mutating func noteFix(of trip: String, from id: ConnectionID, now: Int64) -> Bool {
        if byConnection[id]?[trip] != nil {
            byConnection[id]?[trip]?.lastAckAt = now
            if byTrip[trip]?.last != id {
                byTrip[trip]?.removeAll { $0 == id }
                byTrip[trip, default: []].append(id)
            }
            return false
        }
        if let trips = byConnection[id], trips.count >= Self.maxTripsPerConnection,
            let oldest = trips.min(by: { $0.value.lastAckAt < $1.value.lastAckAt })?.key
        {
            forget(oldest, of: id)
        }
        byConnection[id, default: [:]][trip] = Sending(lastAckAt: now, told: nil)
        var senders = byTrip[trip] ?? []
        if senders.count >= Self.maxSendersPerTrip {
            forget(trip, of: senders.removeFirst())
            senders = byTrip[trip] ?? []
        }
        senders.append(id)
        byTrip[trip] = senders
        return true
    }

    /// What `id` was last told of `trip`; nil: nothing yet (or it does not send the trip).
    func told(_ trip: String, on id: ConnectionID) -> Told? { byConnection[id]?[trip]?.told }

    /// Records what `id` was just told of `trip` (only for a sender of it).
    mutating func setTold(_ told: Told, _ trip: String, on id: ConnectionID) {
        byConnection[id]?[trip]?.told = told
    }

    /// A connection closed: it sends nothing any more. Returns the trips it sent and what it
    /// was last told of each.
    mutating func remove(_ id: ConnectionID) -> [(trip: String, told: Told?)] {
        guard let trips = byConnection.removeValue(forKey: id) else { return [] }
        for trip in trips.keys { dropSender(id, of: trip) }
        return trips.map { ($0.key, $0.value.told) }
    }

    private mutating func forget(_ trip: String, of id: ConnectionID) {
        byConnection[id]?[trip] = nil
        if byConnection[id]?.isEmpty == true { byConnection[id] = nil }
        dropSender(id, of: trip)
    }

    private mutating func dropSender(_ id: ConnectionID, of trip: String) {
        byTrip[trip]?.removeAll { $0 == id }
        if byTrip[trip]?.isEmpty == true { byTrip[trip] = nil }
    }
}
