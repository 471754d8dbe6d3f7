import Dispatch
import TrackHubCore
import TrackHubLWS
import TrackHubStore

/// The hub's way to the trip store: batches appended (the store's own thread commits them)
/// and reads run on a queue of their own, each answered back on the service thread through
/// the inbox. It counts what is in flight, which the drain waits for (PROTOCOL 9: a SIGTERM
/// still acks what was received), and it writes the marker states that changed without an
/// event (every 100 ms, in slices).
///
/// Threads: called on the service thread; completions come back through the inbox. It is
/// `@unchecked Sendable` because those `@Sendable` completions capture it to count down.
final class TripStorage: @unchecked Sendable {
    /// The durable store (SQLite in `--data`, or memory).
    let store: TripStore
    private let trips: TripTable
    private let inbox: ServiceThreadInbox
    private let metrics: HubMetrics
    /// Batches handed to the store whose commit has not come back.
    private(set) var batchesInFlight = 0
    /// Reads on the read queue whose answers are still to go out (those that hold the drain).
    private(set) var readsInFlight = 0

    /// Inside `committingHere`.
    private var mayCommitHere = false
    /// A batch was committed here since the inbox was last drained for it.
    private var committedHere = false
    private var commitHereBudget = CommitHereBudget()
    /// Trips whose state this round still has to write, and how many a slice writes.
    private var statesDue: [String] = []
    private var statesPerSlice = TripStorage.fewestStatesPerSlice

    /// Store reads that must not block the service thread.
    private static let readQueue = DispatchQueue(label: "trackhub.store-read", qos: .userInitiated)

    init(store: TripStore, trips: TripTable, inbox: ServiceThreadInbox, metrics: HubMetrics) {
        self.store = store
        self.trips = trips
        self.inbox = inbox
        self.metrics = metrics
    }

    /// True while a batch or a read is on its way (the drain waits).
    var isBusy: Bool { batchesInFlight > 0 || readsInFlight > 0 }

    /// Appends a batch to the store; `then` runs on the service thread once it committed or
    /// failed, never before `persist` returns. Inside `committingHere` (a received message) the
    /// batch is committed on this thread when the store's writer is idle and the budget allows
    /// (`CommitHereBudget`); `then` then runs at the end of that message's handling.
    func persist(_ records: [StoreRecord], then: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        batchesInFlight += 1
        let submitted = systemMonotonicMicros()
        if mayCommitHere, commitHereBudget.allows(at: submitted, threadCPU: callingThreadCPUMicros()), let result = store.commitHereIfIdle(records) {
            commitHereBudget.spend(systemMonotonicMicros() - submitted)
            metrics.storeCommitsHere += 1
            committedHere = true
            inbox.runAfterThisCallback { [self] in completed(result, submitted: submitted, then) }
            return
        }
        store.append(records) { [self] result in
            inbox.run { [self] in completed(result, submitted: submitted, then) }
        }
    }

    /// A batch came back (service thread).
    private func completed(_ result: Result<Void, StoreError>, submitted: Int64, _ then: (Result<Void, StoreError>) -> Void) {
        metrics.storeCommit.observe(ms: (systemMonotonicMicros() - submitted) / 1000)
        batchesInFlight -= 1
        if case .failure = result { metrics.storeFailures += 1 }
        then(result)
    }

    /// Runs `body` (the handling of one received message) with commits on the service thread
    /// allowed, then what they completed: their completions wait in the inbox, unwoken, and
    /// run here, after `body`, in the order they and any other completions came in.
    func committingHere(_ body: () -> Void) {
        mayCommitHere = true
        body()
        mayCommitHere = false
        if committedHere {
            committedHere = false
            inbox.drain()
        }
    }

    /// Runs `read` on the store-read queue and `then` with its result on the service thread
    /// (service thread only). The drain waits for reads in flight (`holdsDrain`), so their
    /// answers still go out. A failure is counted.
    func read<Value: Sendable>(
        _ read: @escaping @Sendable (TripStore) throws(StoreError) -> Value,
        holdsDrain: Bool = true,
        then: @escaping @Sendable (Result<Value, StoreError>) -> Void
    ) {
        if holdsDrain { readsInFlight += 1 }
        let store = store
        Self.readQueue.async { [self] in
            let result = Result(catching: { () throws(StoreError) in try read(store) })
            inbox.run { [self] in
                if holdsDrain { readsInFlight -= 1 }
                if case .failure = result { metrics.storeReadFailures += 1 }
                then(result)
            }
        }
    }

    /// Writes the state of every trip changed and not yet written, in one batch (the drain).
    func flushChangedTripStates() {
        startStateRound()
        writeDueStates(limit: .max)
    }

    /// Starts a round of state writes (every 100 ms): the trips changed since the last round
    /// are due, written a slice at a time by `writeSomeTripStates`. What the last round left
    /// is written at once first.
    ///
    /// Why slices: a state is about 20 µs to encode and write; one batch of every changed
    /// trip (100 at 1 000 fixes a second) held the store's writer for milliseconds, and every
    /// fix arriving meanwhile waited behind it for its ack (the fix's tail, issue 40). A slice
    /// of at most an eighth of the round, one per sub-tick, keeps that wait short.
    func startStateRound() {
        if !statesDue.isEmpty { writeDueStates(limit: .max) }
        guard !trips.unstoredState.isEmpty else { return }
        statesDue = Array(trips.takeUnstoredStates())
        statesPerSlice = max(Self.fewestStatesPerSlice, (statesDue.count + 7) / 8)
    }

    /// One slice of the round's due states (each sub-tick).
    func writeSomeTripStates() {
        writeDueStates(limit: statesPerSlice)
    }

    /// A slice smaller than this is not worth its own transaction.
    static let fewestStatesPerSlice = 16

    private func writeDueStates(limit: Int) {
        guard !statesDue.isEmpty else { return }
        let count = min(limit, statesDue.count)
        var records: [StoreRecord] = []
        records.reserveCapacity(count)
        for id in statesDue.suffix(count) {
            guard let entry = trips[id] else { continue }  // removed meanwhile
            records.append(.tripState(entry.trip.withoutSeenFixes, createdAt: entry.createdAt, riderJSON: entry.riderJSON))
        }
        statesDue.removeLast(count)
        if !records.isEmpty { persist(records) { _ in } }
    }

    /// Loads the trips of the store into the table (a hub alone, at start; see `LocalCommandLog`).
    func restoreTrips(now: Int64) throws {
        for item in try store.loadTrips() {
            trips.add(item.trip.id, lastEventSent: item.trip.lastEventNumber) { slot in
                var entry = TripEntry(trip: item.trip, createdAt: item.createdAt, slot: slot, riderJSON: item.riderJSON)
                if entry.trip.status == .ended { entry.endedAt = item.trip.endedAt ?? item.createdAt }  // when it ended, for retention
                return entry
            }
            if item.trip.isAnimating(at: now) { trips.animating.insert(item.trip.id) }
        }
    }
}
