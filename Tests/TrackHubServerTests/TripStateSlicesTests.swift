import Testing
import TrackHubCore
import TrackHubStore
import TrackHubSync
import TrackHubTesting
@testable import TrackHubServer

/// The marker states written in slices (`TripStorage.startStateRound` and
/// `writeSomeTripStates`): every changed trip written once per round, no batch past a slice,
/// and the drain's flush writing everything at once.
@Suite struct TripStateSlicesTests {
    /// A store that keeps how many trip states each batch held (and completes every batch).
    final class BatchSizes: TripStore, @unchecked Sendable {
        let sizes = HubMutex<[Int]>([])
        let written = HubMutex<[String]>([])
        func append(_ records: [StoreRecord], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
            var ids: [String] = []
            for case .tripState(let trip, _, _) in records { ids.append(trip.id) }
            sizes.withLock { $0.append(ids.count) }
            written.withLock { $0.append(contentsOf: ids) }
            completion(.success(()))
        }
        func loadTrips() throws(StoreError) -> [StoredTrip] { [] }
        func loadDevices() throws(StoreError) -> [StoredDevice] { [] }
        func loadShares() throws(StoreError) -> [StoredShare] { [] }
        func events(tripID: String, after: Int, limit: Int) throws(StoreError) -> [[UInt8]] { [] }
        func trailPage(tripID: String, after: TrailCursor?, from: Int64?, to: Int64?, storedUpTo: Int64?, limit: Int) throws(StoreError) -> TrailPage {
            TrailPage(fixes: [], next: nil)
        }
        func fixMark() throws(StoreError) -> Int64 { 0 }
        func recentFixes(tripID: String, count: Int) throws(StoreError) -> [StoredFix] { [] }
        func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(StoreError) -> Bool { false }
        var isHealthy: Bool { true }
        func close() {}
    }

    func storage(trips count: Int) throws -> (TripStorage, TripTable, BatchSizes) {
        let table = TripTable(tickHz: 10)
        let route = try Route(lonLatPairs: [[-9.14, 38.70], [-9.14, 38.72]])
        for i in 0..<count {
            let trip = try Trip(id: "t\(i)", route: route, waypoints: [], destination: nil, config: TripConfig(), now: 0)
            table.add("t\(i)") { slot in TripEntry(trip: trip, createdAt: 0, slot: slot, riderJSON: nil) }
            table.markStateUnstored("t\(i)")
        }
        let store = BatchSizes()
        let storage = TripStorage(store: store, trips: table, inbox: ServiceThreadInbox(host: FakeServerHost()), metrics: HubMetrics())
        return (storage, table, store)
    }

    @Test func aRoundWritesEveryChangedTripOnceInSlicesOfAnEighth() throws {
        let (storage, _, store) = try storage(trips: 200)
        storage.startStateRound()
        for _ in 0..<8 { storage.writeSomeTripStates() }
        #expect(store.sizes.withLock { $0 } == Array(repeating: 25, count: 8))
        #expect(Set(store.written.withLock { $0 }) == Set((0..<200).map { "t\($0)" }))
        #expect(store.written.withLock { $0.count } == 200)
        storage.writeSomeTripStates()  // nothing left: no empty batch
        #expect(store.sizes.withLock { $0.count } == 8)
    }

    @Test func aFewChangedTripsGoInOneSlice() throws {
        let (storage, _, store) = try storage(trips: 10)
        storage.startStateRound()
        storage.writeSomeTripStates()
        #expect(store.sizes.withLock { $0 } == [10])
    }

    @Test func whatARoundLeftIsWrittenAtOnceWhenTheNextStarts() throws {
        let (storage, table, store) = try storage(trips: 200)
        storage.startStateRound()
        storage.writeSomeTripStates()
        table.markStateUnstored("t0")
        storage.startStateRound()  // 175 left: one batch, then the new round (t0 again)
        #expect(store.sizes.withLock { $0 } == [25, 175])
        storage.writeSomeTripStates()
        #expect(store.sizes.withLock { $0 } == [25, 175, 1])
    }

    @Test func theDrainsFlushWritesEverythingInOneBatch() throws {
        let (storage, table, store) = try storage(trips: 200)
        storage.startStateRound()
        storage.writeSomeTripStates()
        table.markStateUnstored("t7")
        storage.flushChangedTripStates()
        #expect(store.sizes.withLock { $0 } == [25, 175, 1])
        #expect(Set(store.written.withLock { $0 }).count == 200)
    }
}
