import Synchronization
import TrackHubLWS

/// The HTTP connections waiting for a router search (PROTOCOL 16), so that a search whose
/// client has gone is dropped unrun when its turn comes on the router's queue.
///
/// Each search of a client gets an `Interest`: the service thread marks it gone when the
/// connection closes, and the router's queue reads it (an atomic: the one value both
/// threads touch). The map holds an entry only while a search is queued, so it is bounded
/// by the router queue's limit. Owned by the service thread (`add`, `remove`,
/// `connectionClosed`).
final class RouteSearchClients: @unchecked Sendable {
    /// Whether one search's client still wants its answer.
    final class Interest: Sendable {
        private let gone = Atomic<Bool>(false)
        /// False once its connection has closed.
        var isWanted: Bool { !gone.load(ordering: .relaxed) }
        func markGone() { gone.store(true, ordering: .relaxed) }
    }

    private var waiting: [ConnectionID: [ObjectIdentifier: Interest]] = [:]

    /// Searches whose clients are still connected, waiting or running.
    var count: Int { waiting.values.reduce(0) { $0 + $1.count } }

    /// A new search for `connection`.
    func add(_ connection: ConnectionID) -> Interest {
        let interest = Interest()
        waiting[connection, default: [:]][ObjectIdentifier(interest)] = interest
        return interest
    }

    /// The search has been answered (or dropped).
    func remove(_ interest: Interest, of connection: ConnectionID) {
        waiting[connection]?[ObjectIdentifier(interest)] = nil
        if waiting[connection]?.isEmpty == true { waiting[connection] = nil }
    }

    /// The connections whose peers have gone while they wait: lws does not read a connection
    /// whose answer is pending, so it would hear of the close only when it writes the
    /// answer, after the search ran. Each is marked gone and dropped (one peek per waiting
    /// connection, every housekeeping pass; at most the router queue's limit of them).
    func sweepClosedPeers(_ host: any ServerHost) {
        for id in waiting.keys where host.hasPeerClosed(id) {
            connectionClosed(id)
            host.drop(id)
        }
    }

    /// The connection closed: its searches are no longer wanted.
    func connectionClosed(_ connection: ConnectionID) {
        guard let interests = waiting.removeValue(forKey: connection) else { return }
        for interest in interests.values { interest.markGone() }
    }
}
