import Dispatch
import TrackHubCore
import TrackHubSync

/// The one place searches run (PROTOCOL 16): a serial queue off the service thread with
/// three bounds, so that a new search is answered within `startDeadline` whatever other
/// clients asked for:
/// - at most `limit` searches waiting or running (default 1 000); past it a search is
///   refused at once (`unavailable`);
/// - one owner (a client's address) holds at most `perOwnerLimit` of them (default a tenth
///   of `limit`); past it its search is refused at once (`rateLimited`);
/// - a search is run only if, when its turn comes, its client still wants it (`isWanted`:
///   an HTTP client that has gone does not) and it waited less than `startDeadline`
///   (default 10 s); otherwise it is answered `abandoned` or `unavailable` without running.
///
/// A search that has started runs to its end (Routino cannot be interrupted); the deadline
/// bounds the wait, and the per-owner share bounds how much of the wait one client makes.
///
/// Serial because a backend may not be thread-safe (Routino is not); `done` runs on the
/// router's queue, and the hub hops back to its service thread from there.
public final class RouterQueue: Sendable {
    /// Why a search was not queued.
    public enum Refusal: Error, Sendable, Equatable {
        /// `limit` searches are queued already.
        case queueFull
        /// This owner holds `perOwnerLimit` of them already.
        case ownerShareFull
    }

    /// What happened to a queued search that did not run.
    public enum Skipped: Sendable, Equatable {
        /// Its client had gone when its turn came (`isWanted` said no).
        case abandoned
        /// It waited longer than `startDeadline` for its turn.
        case tooLate
    }

    /// The backend; its `findRoute` is called only on this queue's serial queue.
    public let router: any Router
    /// Searches waiting or running at most.
    public let limit: Int
    /// Searches one owner may have waiting or running.
    public let perOwnerLimit: Int
    /// How long a search may wait for its turn, in nanoseconds of the monotonic clock.
    public let startDeadlineNanos: UInt64
    private let queue = DispatchQueue(label: "trackhub.router")
    private let pending = HubMutex(Pending())
    /// The monotonic clock the start deadline is measured on, in nanoseconds (a test's own).
    private let nanosNow: @Sendable () -> UInt64

    /// What is queued now: the total and each owner's count (an owner is in the map only
    /// while it has a search queued, so the map holds at most `limit` owners).
    private struct Pending {
        var total = 0
        var byOwner: [String: Int] = [:]
    }

    /// A queue in front of `router`, with PROTOCOL 16's bounds as defaults: 1 000 searches, a
    /// tenth of them per owner (at least 1), 10 s to start.
    /// - Parameters:
    ///   - nanosNow: the monotonic clock of the start deadline (default the system's).
    public init(
        router: any Router, limit: Int = 1_000, perOwnerLimit: Int? = nil, startDeadlineSeconds: Double = 10,
        nanosNow: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) {
        self.router = router
        self.nanosNow = nanosNow
        self.limit = limit
        self.perOwnerLimit = max(1, perOwnerLimit ?? limit / 10)
        self.startDeadlineNanos = UInt64(max(0, startDeadlineSeconds) * 1e9)
    }

    /// Searches waiting or running now.
    public var depth: Int { pending.withLock { $0.total } }

    /// Queues a search. `done` gets the result (or why it was skipped) and the search's own
    /// time in seconds (0 when skipped). Returns the refusal (and never calls `done`) when the
    /// queue or the owner's share is full.
    /// - Parameters:
    ///   - owner: whose share it counts against (a client's address); nil: the hub's own
    ///     search (a reroute), counted only against `limit`.
    ///   - isWanted: asked on the router's queue when the search's turn comes; false drops it.
    public func search(
        _ query: RouteQuery, owner: String? = nil, isWanted: @escaping @Sendable () -> Bool = { true },
        done: @escaping @Sendable (Result<FoundRoute, RouterError>, Skipped?, Double) -> Void
    ) -> Refusal? {
        let refusal = pending.withLock { state -> Refusal? in
            guard state.total < limit else { return .queueFull }
            if let owner {
                guard state.byOwner[owner, default: 0] < perOwnerLimit else { return .ownerShareFull }
                state.byOwner[owner, default: 0] += 1
            }
            state.total += 1
            return nil
        }
        if let refusal { return refusal }
        let router = router
        let queuedAt = nanosNow()
        let deadline = startDeadlineNanos
        queue.async { [self] in
            let start = nanosNow()
            var skipped: Skipped?
            if !isWanted() {
                skipped = .abandoned
            } else if start &- queuedAt > deadline {
                skipped = .tooLate
            }
            let result: Result<FoundRoute, RouterError>
            switch skipped {
            case .abandoned: result = .failure(.unavailable("the search's client has gone"))
            case .tooLate: result = .failure(.unavailable("the search did not start within \(deadline / 1_000_000_000) s of its request; try again"))
            case nil: result = router.findRoute(query)
            }
            let seconds = skipped == nil ? Double(nanosNow() &- start) / 1e9 : 0
            pending.withLock { state in
                state.total -= 1
                if let owner {
                    let left = state.byOwner[owner, default: 1] - 1
                    state.byOwner[owner] = left > 0 ? left : nil
                }
            }
            done(result, skipped, seconds)
        }
        return nil
    }
}
