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
}
