import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// What trip commands share: the trip capacity, snapshots after a change, fresh ids.
extension Hub {
    /// PROTOCOL 1: at most `--max-trips` trips not `ended` (creates in flight included). The
    /// exact count walks every trip, so it is taken only when the cheap upper bound (every
    /// trip held, ended ones too) reaches the limit.
    func checkTripCapacity() throws(ProtocolError) {
        if trips.count + trips.creating.count < config.maxTrips { return }
        var open = trips.creating.count
        for entry in trips.entries.values where entry.trip.status != .ended { open += 1 }
        if open >= config.maxTrips {
            throw .tooLarge("trips: \(open) trips have not ended; the limit is \(config.maxTrips) (--max-trips)")
        }
    }

    /// A fresh snapshot to every subscriber (after creation or a new route); share
    /// subscribers get the customer's view of it (PROTOCOL 13), encoded once for all of them.
    func sendSnapshotToSubscribers(trip id: String, now: Int64) {
        guard let followers = subscriptions.followers(of: id), !followers.isEmpty else { return }
        let trail = recentTrailForAnswer(trip: id)
        let message = OutboundMessage.snapshot(TripView(id: id, entry: trips[id], trail: trail, now: now), re: nil, recovered: nil)
        var customerMessage: OutboundMessage?
        for (connection, _) in followers {
            guard sessions[connection]?.grants.seesAsCustomer(id) == true else {
                enqueue(message, to: connection)
                continue
            }
            if customerMessage == nil {
                customerMessage = OutboundMessage.snapshot(
                    TripView(id: id, entry: trips[id], trail: [], now: now, audience: .customer), re: nil, recovered: nil)
            }
            if let customerMessage { enqueue(customerMessage, to: connection) }
        }
    }

    /// A fresh random trip id (`t-` and 10 characters) no trip here has.
    func makeTripID() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        var id: String
        repeat {
            id = "t-" + String((0..<10).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        } while trips.isTaken(id)
        return id
    }

    /// The last 100 fixes for a trip body or snapshot that follows a command already carried
    /// out: the command stands, so a failed read is logged and counted, and the answer goes
    /// out with an empty trail rather than not at all.
    func recentTrailForAnswer(trip id: String) -> [StoredFix] {
        do {
            return try store.recentFixes(tripID: id, count: 100)
        } catch {
            metrics.storeReadFailures += 1
            logWarning("trip \(id): its trail could not be read for an answer (\(error)); sent without it")
            return []
        }
    }
}
