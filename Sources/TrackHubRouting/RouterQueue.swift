import Dispatch
import Synchronization
import TrackHubCore

/// The one place searches run (PROTOCOL 16): a serial queue off the service thread, at most
/// `limit` searches waiting or running (default 1 000); past it a search is refused at once
/// (`unavailable`), so a burst of reroutes cannot grow memory or delay without bound.
///
/// Serial because a backend may not be thread-safe (Routino is not); `done` runs on the
/// router's queue, and the hub hops back to its service thread from there.
public final class RouterQueue: Sendable {
    public let router: any Router
    public let limit: Int
    private let queue = DispatchQueue(label: "trackhub.router")
    private let pending = Mutex(0)

    public init(router: any Router, limit: Int = 1_000) {
        self.router = router
        self.limit = limit
    }

    /// Searches waiting or running now.
    public var depth: Int { pending.withLock { $0 } }

    /// Queues a search; `done` gets the result and the search's own time in seconds. Returns
    /// false (and never calls `done`) when `limit` searches are already queued.
    public func search(
        _ query: RouteQuery, done: @escaping @Sendable (Result<FoundRoute, RouterError>, Double) -> Void
    ) -> Bool {
        let admitted = pending.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else { return false }
        let router = router
        queue.async { [self] in
            let start = DispatchTime.now().uptimeNanoseconds
            let result = router.findRoute(query)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            pending.withLock { $0 -= 1 }
            done(result, seconds)
        }
        return true
    }
}
