import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// A trip's new snapshot to its subscribers after a change (a create, a new route).
extension Hub {
    /// A fresh snapshot to every subscriber (after creation or a new route); share
    /// subscribers get the customer's view of it (PROTOCOL 13), encoded once for all of them.
    /// The others' snapshot carries the trail, read once on the store-read queue into a place
    /// held in each one's queue (what is sent to the trip meanwhile comes after it). The
    /// command already stands: a failed read is logged and the snapshot goes without a trail.
    func sendSnapshotToSubscribers(trip id: String, now: Int64) {
        guard let followers = fanout.subscriptions.followers(of: id), !followers.isEmpty else { return }
        var view = TripView(id: id, entry: trips[id], trail: [], now: now)
        var customerMessage: OutboundMessage?
        var reserved: [(connection: ConnectionID, ticket: UInt64)] = []
        for (connection, _) in followers {
            guard let session = fanout[connection], !session.isClosing else { continue }
            if session.grants.seesAsCustomer(id) {
                view.audience = .customer
                customerMessage = customerMessage ?? OutboundMessage.snapshot(view, re: nil, recovered: nil)
                view.audience = .full
                if let customerMessage { fanout.enqueue(customerMessage, to: connection) }
                continue
            }
            let (ticket, outcome) = session.queue.reserveSnapshot(of: id)
            if outcome == .replacedReply { fanout.counters.repliesReplaced += 1 }
            reserved.append((connection, ticket))
        }
        guard !reserved.isEmpty else { return }
        let fullView = view, waiting = reserved
        readFromStore({ store throws(StoreError) in try store.recentFixes(tripID: id, count: 100).map(\.fix) }) { [self] result in
            var view = fullView
            switch result {
            case .success(let trail): view.trail = trail
            case .failure(let error): logWarning("trip \(id): its trail could not be read for a snapshot (\(error)); sent without it")
            }
            let message = OutboundMessage.snapshot(view, re: nil, recovered: nil)
            for (connection, ticket) in waiting { fanout.fillReservation(ticket, with: [message], for: connection) }
        }
    }
}
