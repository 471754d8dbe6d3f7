import Dispatch
import Synchronization
import TrackHubCore

/// A `TripStore` in memory: nothing survives the process. It completes batches
/// asynchronously on its own queue, like the durable stores do, so the hub's
/// ack-after-commit path is the same with every store.
///
/// Bounds: at most `maxFixesPerTrip` fixes and `maxEventsPerTrip` events per trip are
/// kept (the oldest are forgotten past that); trips are removed with `forget(tripID:)`.
public final class MemoryTripStore: TripStore {
    private struct TripData {
        var trip: Trip?
        var createdAt: Int64 = 0
        var riderJSON: [UInt8]?
        var fixes: [StoredFix] = []
        var firstEventN = 1
        var events: [[UInt8]] = []
    }

    private let state = Mutex<[String: TripData]>([:])
    private let queue = DispatchQueue(label: "trackhub.memory-store")
    private let failing = Atomic<Bool>(false)
    public let maxFixesPerTrip: Int
    public let maxEventsPerTrip: Int

    public init(maxFixesPerTrip: Int = 100_000, maxEventsPerTrip: Int = 100_000) {
        self.maxFixesPerTrip = maxFixesPerTrip
        self.maxEventsPerTrip = maxEventsPerTrip
    }

    /// Test hook: while true, every append fails with `unavailable`.
    public func setFailing(_ value: Bool) { failing.store(value, ordering: .relaxed) }

    public var isHealthy: Bool { !failing.load(ordering: .relaxed) }

    public func append(_ records: [StoreRecord], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        queue.async { [self] in
            if failing.load(ordering: .relaxed) {
                completion(.failure(.unavailable("the store is failing (test hook)")))
                return
            }
            state.withLock { trips in
                for record in records { apply(record, to: &trips) }
            }
            completion(.success(()))
        }
    }

    private func apply(_ record: StoreRecord, to trips: inout [String: TripData]) {
        switch record {
        case .tripState(let trip, let createdAt, let riderJSON):
            var data = trips[trip.id, default: TripData()]
            data.trip = trip
            data.createdAt = createdAt
            data.riderJSON = riderJSON
            trips[trip.id] = data
        case .fix(let tripID, let fix, let refusal, _):
            var data = trips[tripID, default: TripData()]
            // Keep (ts, seq) order: fixes mostly arrive in order, so insert from the back.
            var index = data.fixes.count
            while index > 0, Self.isAfter(data.fixes[index - 1].fix, fix) { index -= 1 }
            data.fixes.insert(StoredFix(fix: fix, refusal: refusal), at: index)
            if data.fixes.count > maxFixesPerTrip { data.fixes.removeFirst(data.fixes.count - maxFixesPerTrip) }
            trips[tripID] = data
        case .event(let tripID, _, let encoded):
            var data = trips[tripID, default: TripData()]
            data.events.append(encoded)
            if data.events.count > maxEventsPerTrip {
                let excess = data.events.count - maxEventsPerTrip
                data.events.removeFirst(excess)
                data.firstEventN += excess
            }
            trips[tripID] = data
        }
    }

    private static func isAfter(_ a: FixInput, _ b: FixInput) -> Bool {
        if a.ts != b.ts { return a.ts > b.ts }
        return (a.seq ?? -1) > (b.seq ?? -1)
    }

    public func loadTrips() throws(StoreError) -> [StoredTrip] {
        state.withLock { trips in
            trips.values.compactMap { data in data.trip.map { StoredTrip(trip: $0, createdAt: data.createdAt, riderJSON: data.riderJSON) } }
        }
    }

    public func events(tripID: String, after: Int, limit: Int) throws(StoreError) -> [[UInt8]] {
        state.withLock { trips in
            guard let data = trips[tripID] else { return [] }
            let start = max(0, after + 1 - data.firstEventN)
            guard start < data.events.count else { return [] }
            return Array(data.events[start..<min(data.events.count, start + limit)])
        }
    }

    public func trail(tripID: String, from: Int64?, to: Int64?, limit: Int) throws(StoreError) -> [StoredFix] {
        state.withLock { trips in
            guard let data = trips[tripID] else { return [] }
            var result: [StoredFix] = []
            for stored in data.fixes {
                if let from, stored.fix.ts < from { continue }
                if let to, stored.fix.ts > to { break }
                result.append(stored)
                if result.count >= limit { break }
            }
            return result
        }
    }

    public func recentFixes(tripID: String, count: Int) throws(StoreError) -> [StoredFix] {
        state.withLock { trips in
            guard let data = trips[tripID] else { return [] }
            return Array(data.fixes.suffix(count))
        }
    }

    public func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(StoreError) -> Bool {
        state.withLock { trips in
            guard let data = trips[tripID] else { return false }
            if let seq { return data.fixes.contains { $0.fix.seq == seq } }
            return data.fixes.contains { $0.fix.ts == ts }
        }
    }

    /// Removes a trip and everything stored for it (retention).
    public func forget(tripID: String) {
        _ = state.withLock { $0.removeValue(forKey: tripID) }
    }

    public func close() {
        queue.sync {}
    }
}
