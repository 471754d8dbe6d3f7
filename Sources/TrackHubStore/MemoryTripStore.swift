import Dispatch
import Synchronization
import TrackHubCore
import TrackHubSync

/// A `TripStore` in memory: nothing survives the process. It completes batches
/// asynchronously on its own queue, like the durable stores do, so the hub's
/// ack-after-commit path is the same with every store.
///
/// Bounds: at most `maxFixesPerTrip` fixes and `maxEventsPerTrip` events per trip are
/// kept (the oldest are forgotten past that); trips are removed with `forget(tripID:)`.
public final class MemoryTripStore: TripStore, WebhookPositionStore {
    private struct TripData {
        var trip: Trip?
        var createdAt: Int64 = 0
        var riderJSON: [UInt8]?
        var fixes: [StoredFix] = []
        /// Each fix's number (`TrailCursor.n`), in step with `fixes`.
        var fixNumbers: [Int64] = []
        /// The events kept, ordered by their `n` (as the SQLite store keys them: a trip restored
        /// from a cluster snapshot keeps only its last ones, so the first need not be `n` 1).
        var events: [[UInt8]] = []
        /// Each event's `n`, in step with `events`.
        var eventNumbers: [Int] = []
    }

    private struct State {
        var trips: [String: TripData] = [:]
        /// The number of the last fix stored, in any trip.
        var lastFixNumber: Int64 = 0
        var devices: [String: StoredDevice] = [:]
        var shares: [String: StoredShare] = [:]
        var webhooks = WebhookStoredState()
    }

    private let state = HubMutex<State>(State())
    private let queue = DispatchQueue(label: "trackhub.memory-store")
    private let failing = Atomic<Bool>(false)
    private let readsFailing = Atomic<Bool>(false)
    private let trailGate = HubMutex<ReadGate?>(nil)
    /// Fixes kept per trip; past it the oldest are forgotten (default 100 000).
    public let maxFixesPerTrip: Int
    /// Events kept per trip; past it the oldest are forgotten, so `events(after:)` starts later.
    public let maxEventsPerTrip: Int

    /// An empty store; the bounds are per trip (tests of the bounds pass small ones).
    public init(maxFixesPerTrip: Int = 100_000, maxEventsPerTrip: Int = 100_000) {
        self.maxFixesPerTrip = maxFixesPerTrip
        self.maxEventsPerTrip = maxEventsPerTrip
    }

    /// Test hook: while true, every append fails with `unavailable`.
    public func setFailing(_ value: Bool) { failing.store(value, ordering: .relaxed) }

    /// Test hook: while true, every read of fixes or events fails with `unavailable`.
    public func setReadsFailing(_ value: Bool) { readsFailing.store(value, ordering: .relaxed) }

    /// Test hook: while true, every read of fixes or events waits (on the reading thread)
    /// until it is set false again, to show what does not wait for a read.
    public func setReadsHeld(_ value: Bool) {
        readGate.withLock { $0 = value }
        if !value { readGateOpened.signal() }
    }

    /// Reads waiting at the gate now.
    public var heldReads: Int { heldReadCount.load(ordering: .relaxed) }

    private let readGate = HubMutex<Bool>(false)
    private let readGateOpened = DispatchSemaphore(value: 0)
    private let heldReadCount = Atomic<Int>(0)

    /// Test hook: while set, every `trailPage` call waits at `gate` first (see `ReadGate`),
    /// so a test can hold a trail read in flight and look at what the hub does meanwhile.
    public func holdTrailReads(_ gate: ReadGate?) { trailGate.withLock { $0 = gate } }

    private func checkReadable() throws(StoreError) {
        if readGate.withLock({ $0 }) {
            heldReadCount.add(1, ordering: .relaxed)
            while readGate.withLock({ $0 }) { _ = readGateOpened.wait(timeout: .now() + .milliseconds(50)) }
            heldReadCount.subtract(1, ordering: .relaxed)
            readGateOpened.signal()  // the next held read, if any
        }
        if readsFailing.load(ordering: .relaxed) { throw .unavailable("reads are failing (test hook)") }
    }

    /// False only while the `setFailing` test hook is on.
    public var isHealthy: Bool { !failing.load(ordering: .relaxed) }

    /// Applies the batch on the store's serial queue and completes it there, in submission order;
    /// fails the whole batch while `setFailing` is on.
    public func append(_ records: [StoreRecord], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        queue.async { [self] in
            if failing.load(ordering: .relaxed) {
                completion(.failure(.unavailable("the store is failing (test hook)")))
                return
            }
            state.withLock { state in
                for record in records { apply(record, to: &state) }
            }
            completion(.success(()))
        }
    }

    /// The state the `.webhook` records appended so far add up to.
    public func loadWebhookState() throws(StoreError) -> WebhookStoredState {
        state.withLock { $0.webhooks }
    }

    /// The devices kept, ordered by id (bytewise), as the SQLite store returns them.
    public func loadDevices() throws(StoreError) -> [StoredDevice] {
        state.withLock { $0.devices.values.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) } }
    }

    /// The share links kept, ordered by `jti`.
    public func loadShares() throws(StoreError) -> [StoredShare] {
        state.withLock { $0.shares.values.sorted { $0.jti < $1.jti } }
    }

    private func apply(_ record: StoreRecord, to state: inout State) {
        switch record {
        case .share(let share):
            state.shares[share.jti] = share
        case .forgetShares(let before):
            state.shares = state.shares.filter { $0.value.expiresAt >= before }
        case .device(let device):
            state.devices[device.id] = device
        case .deleteDevice(let id):
            state.devices[id] = nil
        case .webhook(let record):
            state.webhooks.apply(record)
        case .tripState(let trip, let createdAt, let riderJSON):
            var data = state.trips[trip.id, default: TripData()]
            data.trip = trip
            data.createdAt = createdAt
            data.riderJSON = riderJSON
            state.trips[trip.id] = data
        case .fix(let tripID, let fix, let refusal, _):
            var data = state.trips[tripID, default: TripData()]
            state.lastFixNumber += 1
            // Keep (ts, seq, n) order: fixes mostly arrive in order, so insert from the back.
            var index = data.fixes.count
            while index > 0, Self.key(data.fixes[index - 1].fix) > Self.key(fix) { index -= 1 }
            data.fixes.insert(StoredFix(fix: fix, refusal: refusal), at: index)
            data.fixNumbers.insert(state.lastFixNumber, at: index)
            if data.fixes.count > maxFixesPerTrip {
                data.fixes.removeFirst(data.fixes.count - maxFixesPerTrip)
                data.fixNumbers.removeFirst(data.fixNumbers.count - maxFixesPerTrip)
            }
            state.trips[tripID] = data
        case .event(let tripID, let n, let encoded):
            var data = state.trips[tripID, default: TripData()]
            // Events mostly come in order: append; an `n` kept already is replaced (as SQLite's
            // `INSERT OR REPLACE`), an earlier one is put in its place.
            if let last = data.eventNumbers.last, n <= last {
                let index = Self.firstEvent(after: n - 1, in: data.eventNumbers)
                if data.eventNumbers[index] == n {
                    data.events[index] = encoded
                } else {
                    data.events.insert(encoded, at: index)
                    data.eventNumbers.insert(n, at: index)
                }
            } else {
                data.events.append(encoded)
                data.eventNumbers.append(n)
            }
            if data.events.count > maxEventsPerTrip {
                let excess = data.events.count - maxEventsPerTrip
                data.events.removeFirst(excess)
                data.eventNumbers.removeFirst(excess)
            }
            state.trips[tripID] = data
        }
    }

    /// The trail order of the SQLite store: by ts, then seq, a fix without seq first.
    private static func key(_ fix: FixInput) -> TrailKey {
        TrailKey(ts: fix.ts, hasSeq: fix.seq != nil, seq: fix.seq ?? 0)
    }

    private struct TrailKey: Comparable {
        var ts: Int64
        var hasSeq: Bool
        var seq: Int64
        static func < (a: TrailKey, b: TrailKey) -> Bool {
            if a.ts != b.ts { return a.ts < b.ts }
            if a.hasSeq != b.hasSeq { return !a.hasSeq }
            return a.seq < b.seq
        }
    }

    /// Every trip with a stored state, ended ones included (this store has no retention; see
    /// `forget(tripID:)`), in no particular order.
    public func loadTrips() throws(StoreError) -> [StoredTrip] {
        state.withLock { state in
            state.trips.values.compactMap { data in data.trip.map { StoredTrip(trip: $0, createdAt: data.createdAt, riderJSON: data.riderJSON) } }
        }
    }

    /// The trip's events with `n > after`, in order, at most `limit`; those forgotten past
    /// `maxEventsPerTrip` are skipped.
    public func events(tripID: String, after: Int, limit: Int) throws(StoreError) -> [[UInt8]] {
        try checkReadable()
        return state.withLock { state in
            guard let data = state.trips[tripID], limit > 0 else { return [] }
            let start = Self.firstEvent(after: after, in: data.eventNumbers)
            guard start < data.events.count else { return [] }
            return Array(data.events[start..<min(data.events.count, start + limit)])
        }
    }

    /// The index of the first of these ascending event numbers above `after` (the count: none).
    private static func firstEvent(after: Int, in numbers: [Int]) -> Int {
        var low = 0
        var high = numbers.count
        while low < high {
            let middle = (low + high) / 2
            if numbers[middle] <= after { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// A page of the trail (see `TripStore.trailPage`), found by binary search over the trip's
    /// sorted fixes; waits at the `holdTrailReads` gate first when one is set.
    public func trailPage(tripID: String, after: TrailCursor?, from: Int64?, to: Int64?, storedUpTo: Int64?, limit: Int) throws(StoreError) -> TrailPage {
        if let gate = trailGate.withLock({ $0 }) { gate.pass() }
        try checkReadable()
        return state.withLock { state in
            guard let data = state.trips[tripID], limit > 0 else { return TrailPage(fixes: [], next: nil) }
            // The first fix after the cursor and not before `from` (binary search: fixes are sorted).
            let lower = TrailKey(ts: from ?? Int64.min, hasSeq: false, seq: 0)
            var low = 0
            var high = data.fixes.count
            while low < high {
                let middle = (low + high) / 2
                let key = Self.key(data.fixes[middle].fix)
                let isBefore: Bool
                if key < lower {
                    isBefore = true
                } else if let after {
                    let cursor = TrailKey(ts: after.ts, hasSeq: after.seq != nil, seq: after.seq ?? 0)
                    isBefore = key < cursor || (key == cursor && data.fixNumbers[middle] <= after.n)
                } else {
                    isBefore = false
                }
                if isBefore { low = middle + 1 } else { high = middle }
            }
            var fixes: [StoredFix] = []
            var next: TrailCursor?
            for index in low..<data.fixes.count {
                let stored = data.fixes[index]
                if let to, stored.fix.ts > to { break }
                if let storedUpTo, data.fixNumbers[index] > storedUpTo { continue }
                fixes.append(stored)
                if fixes.count == limit {
                    next = TrailCursor(ts: stored.fix.ts, seq: stored.fix.seq, n: data.fixNumbers[index])
                    break
                }
            }
            return TrailPage(fixes: fixes, next: next)
        }
    }

    /// The number of the last fix stored in any trip (0: none).
    public func fixMark() throws(StoreError) -> Int64 {
        state.withLock { $0.lastFixNumber }
    }

    /// The trip's last `count` fixes kept, oldest first.
    public func recentFixes(tripID: String, count: Int) throws(StoreError) -> [StoredFix] {
        try checkReadable()
        return state.withLock { state in
            guard let data = state.trips[tripID] else { return [] }
            return Array(data.fixes.suffix(count))
        }
    }

    /// Whether the trip keeps a fix with this seq (or, with seq nil, this ts); a linear scan.
    public func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(StoreError) -> Bool {
        state.withLock { state in
            guard let data = state.trips[tripID] else { return false }
            if let seq { return data.fixes.contains { $0.fix.seq == seq } }
            return data.fixes.contains { $0.fix.ts == ts }
        }
    }

    /// Removes a trip and everything stored for it (retention).
    public func forget(tripID: String) {
        _ = state.withLock { $0.trips.removeValue(forKey: tripID) }
    }

    /// Waits until the batches already submitted have completed.
    public func close() {
        queue.sync {}
    }
}

/// A test's hold on reads (`MemoryTripStore.holdTrailReads`): each read that reaches the gate
/// reports it (`waitForRead`) and waits until the test lets one read through (`release`), or
/// all of them (`open`). Semaphores, so the test neither polls nor sleeps.
public final class ReadGate: Sendable {
    private struct State {
        var isOpen = false
        /// Reads that came to the gate and were not let through by `release` (at least the
        /// number waiting: `open` may then signal more than needed, which is harmless).
        var waiting = 0
    }
    private let state = HubMutex(State())
    private let arrived = DispatchSemaphore(value: 0)
    private let admitted = DispatchSemaphore(value: 0)

    /// A closed gate: every read that reaches it waits until `release` or `open`.
    public init() {}

    /// Called by the read: reports its arrival, then waits to be let through.
    func pass() {
        let mustWait = state.withLock { state -> Bool in
            if state.isOpen { return false }
            state.waiting += 1
            return true
        }
        guard mustWait else { return }
        arrived.signal()
        admitted.wait()
    }

    /// Waits until a read is held at the gate; false when none came within `timeout` seconds.
    public func waitForRead(timeout: Double = 10) -> Bool {
        arrived.wait(timeout: .now() + timeout) == .success
    }

    /// Lets one held read (or the next one to come) through.
    public func release() {
        state.withLock { state in state.waiting = max(0, state.waiting - 1) }
        admitted.signal()
    }

    /// Lets every read through from now on, the held ones included.
    public func open() {
        let held = state.withLock { state -> Int in
            state.isOpen = true
            return state.waiting
        }
        for _ in 0..<held { admitted.signal() }
    }
}
