import Dispatch
import Foundation
import Testing
import TrackHubCore
import TrackHubSync
@testable import TrackHubStore

/// What only the SQLite store does: its files, reopening, group commit, its write queue's
/// bound, retention, its unique index. What both stores promise is `TripStoreContractTests`.
@Suite struct SQLiteTripStoreTests {
    @Test func groupCommitPutsQueuedBatchesInOneTransaction() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        let before = store.committedTransactions
        let release = store.pauseWriter()
        let done = DispatchSemaphore(value: 0)
        for i in 0..<500 {
            var trip = makeTrip("t\(i % 10)")
            let records = drive(&trip, fixes: [fix(0, ts: t0 + Int64(i), seq: Int64(i))], now: t0)
            store.append(records) { _ in done.signal() }
        }
        release()
        for _ in 0..<500 { done.wait() }
        #expect(store.committedTransactions - before == 1)
        #expect(try store.trail(tripID: "t3", from: nil, to: nil, limit: 1000).count == 50)
        #expect(try store.loadTrips().count == 10)
    }

    /// One fix per commit, as couriers send at a second each: the WAL passes SQLite's 1 000
    /// pages many times and the checkpoints run on their own thread (the writer's own,
    /// past `fallbackPages`, only if that thread fell behind on a loaded machine), and
    /// everything reads back.
    @Test func walCheckpointsRunOffTheWritersCommits() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        var trip = makeTrip("t1")
        for i in 0..<3000 {
            let records = drive(&trip, fixes: [fix(0, ts: t0 + Int64(i), seq: Int64(i))], now: t0)
            #expect(isSuccess(appendAndWait(store, records)))
        }
        #expect(store.waitForBackgroundCheckpoint(timeoutS: 10))
        #expect(store.walCheckpoints.background >= 1)
        #expect(store.walCheckpoints.mostPages > Int(SQLiteCheckpointer.thresholdPages))
        #expect(try store.trail(tripID: "t1", from: nil, to: nil, limit: 5000).count == 3000)
    }

    @Test func reopenRestoresTripsFixesAndEventsExactly() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        var trips = [makeTrip("a"), makeTrip("b", waypoints: []), makeTrip("c", waypoints: [])]
        var allFixes: [String: [StoredFix]] = [:]
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            for index in trips.indices {
                _ = trips[index].created(now: t0)
                appendAndWait(store, [.tripState(trips[index], createdAt: t0, riderJSON: nil)])
                // Towards the waypoint at 0.01: a holds there, b (no waypoints) keeps going, c goes off route.
                var fixes = (0..<6).map { fix(Double($0) * 0.002, ts: t0 + 10_000 * Int64($0 + 1), seq: Int64($0)) }
                if index == 2 { fixes.append(FixInput(lat: 0.011, lon: 0.01, ts: t0 + 80_000, seq: 6)) }
                let records = drive(&trips[index], fixes: fixes, now: t0)
                #expect(isSuccess(appendAndWait(store, records)))
                allFixes[trips[index].id] = try store.trail(tripID: trips[index].id, from: nil, to: nil, limit: 100)
            }
            _ = trips[1].end(now: t0 + 100_000)
            appendAndWait(store, [.tripState(trips[1], createdAt: t0, riderJSON: nil)])
            store.close()
        }
        #expect(trips[0].status == .holding)
        #expect(trips[1].status == .ended)
        #expect(trips[2].status == .offRoute)
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        let loaded = Dictionary(uniqueKeysWithValues: try store.loadTrips().map { ($0.trip.id, $0.trip) })
        for trip in trips {
            #expect(loaded[trip.id].map(canonical) == canonical(trip), "trip \(trip.id)")
            #expect(loaded[trip.id]?.status == trip.status)
            #expect(try store.trail(tripID: trip.id, from: nil, to: nil, limit: 100) == allFixes[trip.id])
        }
        let eventCount = try store.events(tripID: "a", after: 0, limit: 100).count
        #expect(eventCount == trips[0].lastEventNumber - 1)  // trip_created was not stored as an event here
    }

    @Test func fixesStoredAfterTheLastStateAreJudgedAgainOnLoad() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        var trip = makeTrip()
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            appendAndWait(store, [.tripState(trip, createdAt: t0, riderJSON: nil)])
            // The hub stores fixes first and the state after applying: a crash in between leaves
            // fixes newer than the stored state.
            var records: [StoreRecord] = []
            for i in 0..<3 {
                let f = fix(Double(i) * 0.001, ts: t0 + 10_000 * Int64(i + 1), seq: Int64(i))
                records.append(.fix(tripID: "t1", fix: f, refusal: trip.judge(f).refusal, receivedAt: t0))
            }
            appendAndWait(store, records)
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        var loaded = try #require(try store.loadTrips().first).trip
        #expect(canonical(loaded) == canonical(trip))
        #expect(loaded.judge(fix(0.001, ts: t0 + 20_000, seq: 1)) == .refused(.duplicate))
    }

    /// The hub never appends a duplicate (PROTOCOL 7: a duplicate is not new, so not stored),
    /// and the memory store keeps what it is given; SQLite's unique (trip, seq) index also
    /// keeps a resend once if the hub's memory of it was lost.
    @Test func duplicatesAreNotStoredTwice() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        let f = fix(0, ts: t0, seq: 7)
        appendAndWait(store, [.fix(tripID: "t1", fix: f, refusal: nil, receivedAt: t0)])
        appendAndWait(store, [.fix(tripID: "t1", fix: f, refusal: .duplicate, receivedAt: t0)])
        // Even a resend judged new (its state was lost) is kept once: unique (trip, seq).
        appendAndWait(store, [.fix(tripID: "t1", fix: f, refusal: nil, receivedAt: t0)])
        #expect(try store.trail(tripID: "t1", from: nil, to: nil, limit: 10).count == 1)
    }

    @Test func aDataPathThatIsAFileIsUnusable() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let file = (dir.path as NSString).appendingPathComponent("data")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        #expect(unusablePath(file) == file)
        let below = (file as NSString).appendingPathComponent("sub")
        #expect(unusablePath(below) == below)
    }

    @Test func anUnwritableDirectoryIsUnusable() throws {
        // Root may write anywhere: then a read-only directory proves nothing.
        guard getuid() != 0 else { return }
        let dir = TempDir()
        defer {
            chmod(dir.path, 0o700)
            dir.cleanUp()
        }
        chmod(dir.path, 0o500)
        #expect(unusablePath(dir.path) == dir.path)
    }

    @Test func aCorruptFileIsUnusableAndNamed() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        _ = FileManager.default.createFile(atPath: dir.dbPath, contents: garbage)
        let error = storeError(dir.path)
        guard case .unusable(let path, let reason) = error else {
            Issue.record("expected unusable, got \(String(describing: error))")
            return
        }
        #expect(path == dir.dbPath)
        #expect(!reason.isEmpty)
        #expect("\(error!)".contains("trackhub.db"))
    }

    @Test func anUnknownSchemaVersionIsRefused() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            store.withWriterConnection { db in try? db.exec("PRAGMA user_version = 99") }
            store.close()
        }
        let error = storeError(dir.path)
        guard case .unusable(let path, let reason) = error else {
            Issue.record("expected unusable, got \(String(describing: error))")
            return
        }
        #expect(path == dir.dbPath)
        #expect(reason.contains("99"))
    }

    @Test func aFailingCommitStoresNothingAndReportsUnavailable() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(isSuccess(appendAndWait(store, [.fix(tripID: "t", fix: fix(0, ts: t0, seq: 0), refusal: nil, receivedAt: t0)])))
        // Cap the database at its current size: the next big batch hits SQLITE_FULL.
        store.withWriterConnection { db in try? db.exec("PRAGMA max_page_count = \((try? db.scalarInt("PRAGMA page_count")) ?? 1)") }
        var trip = makeTrip("t")
        let records = (1...2000).map { StoreRecord.fix(tripID: "t", fix: fix(0, ts: t0 + Int64($0), seq: Int64($0)), refusal: nil, receivedAt: t0) }
            + [.tripState(trip, createdAt: t0, riderJSON: nil), .event(tripID: "t", n: 1, encoded: [1])]
        let result = appendAndWait(store, records)
        guard case .failure(.unavailable) = result else {
            Issue.record("expected unavailable, got \(result)")
            return
        }
        #expect(!store.isHealthy)
        #expect(try store.trail(tripID: "t", from: nil, to: nil, limit: 5000).count == 1)
        #expect(try store.events(tripID: "t", after: 0, limit: 5).isEmpty)
        #expect(try store.loadTrips().isEmpty)
        // Room again: the next commit succeeds and the store is healthy.
        store.withWriterConnection { db in try? db.exec("PRAGMA max_page_count = 1073741823") }
        _ = trip.created(now: t0)
        #expect(isSuccess(appendAndWait(store, [.tripState(trip, createdAt: t0, riderJSON: nil)])))
        #expect(store.isHealthy)
        #expect(try store.loadTrips().count == 1)
    }

    @Test func aFullQueueFailsAtOnceInOrder() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path, maxPendingRecords: 10)
        defer { store.close() }
        let release = store.pauseWriter()
        let outcomes = HubMutex<[(Int, Bool)]>([])
        let done = DispatchSemaphore(value: 0)
        for i in 0..<4 {
            let records = (0..<4).map { StoreRecord.fix(tripID: "t", fix: fix(0, ts: t0 + Int64(i * 10 + $0), seq: Int64(i * 10 + $0)), refusal: nil, receivedAt: t0) }
            store.append(records) { result in
                outcomes.withLock { $0.append((i, isSuccess(result))) }
                done.signal()
            }
        }
        release()
        for _ in 0..<4 { done.wait() }
        let seen = outcomes.withLock { $0 }
        #expect(seen.map(\.0) == [0, 1, 2, 3])
        #expect(seen.map(\.1) == [true, true, false, false])
        #expect(try store.trail(tripID: "t", from: nil, to: nil, limit: 100).count == 8)
    }

    @Test func purgeDeletesEndedTripsInSmallBatches() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        var old = makeTrip("old")
        var live = makeTrip("live")
        let fixes = (0..<25).map { fix(Double($0) * 0.0001, ts: t0 + 10_000 * Int64($0 + 1), seq: Int64($0)) }
        appendAndWait(store, drive(&old, fixes: fixes, now: t0))
        appendAndWait(store, drive(&live, fixes: fixes, now: t0))
        let events = old.end(now: t0 + 1_000_000)
        appendAndWait(store, [.tripState(old, createdAt: t0, riderJSON: nil)] + events.map { .event(tripID: "old", n: $0.n, encoded: [0]) })
        let before = store.committedTransactions
        let done = DispatchSemaphore(value: 0)
        let purged = HubMutex<[String]>([])
        // Not yet due: nothing goes.
        store.purgeEnded(before: t0 + 1_000_000, batch: 4) { ids in purged.withLock { $0 = ids }; done.signal() }
        done.wait()
        #expect(purged.withLock { $0 }.isEmpty)
        store.purgeEnded(before: t0 + 1_000_001, batch: 4) { ids in purged.withLock { $0 = ids }; done.signal() }
        done.wait()
        #expect(purged.withLock { $0 } == ["old"])
        #expect(try store.trail(tripID: "old", from: nil, to: nil, limit: 100).isEmpty)
        #expect(try store.events(tripID: "old", after: 0, limit: 100).isEmpty)
        #expect(try store.loadTrips().map(\.trip.id) == ["live"])
        #expect(try store.trail(tripID: "live", from: nil, to: nil, limit: 100).count == 25)
        #expect(store.committedTransactions == before)  // purge transactions are not batch commits
    }
}

func storeError(_ directory: String) -> StoreError? {
    do {
        let store = try SQLiteTripStore(directory: directory)
        store.close()
        return nil
    } catch {
        return error
    }
}

func unusablePath(_ directory: String) -> String? {
    if case .unusable(let path, _)? = storeError(directory) { return path }
    return nil
}
