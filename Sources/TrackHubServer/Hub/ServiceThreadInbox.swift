import TrackHubLWS
import TrackHubSync

/// Work other threads hand to the hub's service thread (store completions, the fleet
/// builder, the router, signal handlers): a closure is queued and the loop woken
/// (`ServerHost.wake`, lws_cancel_service); the service thread runs the queue when it wakes.
/// The only lock between the service thread and the rest; no lock is taken per frame.
///
/// Bounded by what its callers have in flight (each store batch, read and search hands in
/// one closure), not by clients directly.
final class ServiceThreadInbox: Sendable {
    private let queue = HubMutex<[@Sendable () -> Void]>([])
    private let host: any ServerHost

    init(host: any ServerHost) {
        self.host = host
    }

    /// Queues `work` for the service thread and wakes it; safe from any thread.
    func run(_ work: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(work) }
        host.wake()
    }

    /// Queues `work` without waking the loop: for the service thread itself, inside a
    /// callback whose end drains the inbox (`Hub.connectionReceived`), so the work runs after
    /// what the callback is doing, as if it had come back from another thread, but without a
    /// wake-up of the loop.
    func runAfterThisCallback(_ work: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(work) }
    }

    /// Work is waiting (a sub-tick steps aside for it, Hub+Tick).
    var hasWork: Bool { queue.withLock { !$0.isEmpty } }

    /// Runs what is queued, in order (service thread).
    func drain() {
        let work = queue.withLock { pending -> [@Sendable () -> Void] in
            let taken = pending
            pending.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { item() }
    }
}
