import Dispatch
import Foundation
import Testing
import TrackHubCore
import TrackHubSync
@testable import TrackHubStore

/// Fix ids only rise (schema 4, without `AUTOINCREMENT`): a trip's `fix_mark` says which of its
/// fixes its stored state had judged, so a fix stored after the state must get a higher id
/// even when a purge deleted the newest fixes and the hub restarted; a schema 3 store is
/// rebuilt without `AUTOINCREMENT`, keeping every fix with its id.
@Suite struct FixIDTests {
    /// One statement's integer answer through the writer's connection.
    static func scalar(_ store: SQLiteTripStore, _ sql: String) -> Int64? {
        let answer = HubMutex<Int64?>(nil)
        store.withWriterConnection { db in answer.withLock { $0 = try? db.scalarInt(sql) } }
        return answer.withLock { $0 }
    }

    static func purge(_ store: SQLiteTripStore, before: Int64) -> [String] {
        let done = DispatchSemaphore(value: 0)
        let purged = HubMutex<[String]>([])
        store.purgeEnded(before: before, batch: 100) { ids in purged.withLock { $0 = ids }; done.signal() }
        done.wait()
        return purged.withLock { $0 }
    }

    @Test func aFixStoredAfterAPurgeOfTheNewestFixesAndARestartIsJudgedAgainOnLoad() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        var live = makeTrip("live")
        var old = makeTrip("old")
        let fixes = (0..<6).map { fix(Double($0) * 0.0001, ts: t0 + 10_000 * Int64($0 + 1), seq: Int64($0)) }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            #expect(isSuccess(appendAndWait(store, drive(&live, fixes: Array(fixes[0..<3]), now: t0))))
            #expect(isSuccess(appendAndWait(store, drive(&old, fixes: fixes, now: t0))))
            // The live trip's state written after the old trip's fixes: its mark names them.
            #expect(isSuccess(appendAndWait(store, [.tripState(live, createdAt: t0, riderJSON: nil)])))
            let events = old.end(now: t0 + 1_000)
            #expect(isSuccess(appendAndWait(store, [.tripState(old, createdAt: t0, riderJSON: nil)] + events.map { .event(tripID: "old", n: $0.n, encoded: [0]) })))
            #expect(Self.purge(store, before: t0 + 2_000) == ["old"])
            #expect(Self.scalar(store, "SELECT max(id) FROM fixes") == 3)
            #expect(Self.scalar(store, "SELECT fix_mark FROM trips WHERE id = 'live'") == 9)
            store.close()
        }
        // Restarted: the live trip's next fix is stored, then the hub dies before its state.
        let next = fixes[3]
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            #expect(isSuccess(appendAndWait(store, [.fix(tripID: "live", fix: next, refusal: live.judge(next).refusal, receivedAt: t0)])))
            #expect(Self.scalar(store, "SELECT id FROM fixes WHERE seq = 3") == 10)
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        let loaded = try #require(try store.loadTrips().first { $0.trip.id == "live" }).trip
        // Judged again on load, as the hub had judged it: with id 4 (the lowest free one, what
        // SQLite alone would give) the mark 9 would have hidden it.
        #expect(canonical(loaded) == canonical(live))
    }

    @Test func aNewStoreHasNoAutoincrement() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(isSuccess(appendAndWait(store, [.fix(tripID: "t1", fix: fix(0, ts: t0, seq: 1), refusal: nil, receivedAt: t0)])))
        #expect(Self.scalar(store, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") == 0)
        #expect(Self.scalar(store, "PRAGMA user_version") == SQLiteTripStore.schemaVersion)
    }

    @Test func aSchemaThreeStoreIsRebuiltWithoutAutoincrementKeepingEveryFixAndItsID() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        var trip = makeTrip("t1")
        let fixes = (0..<5).map { fix(Double($0) * 0.0001, ts: t0 + 10_000 * Int64($0 + 1), seq: Int64($0)) }
        let trail: [StoredFix]
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            #expect(isSuccess(appendAndWait(store, drive(&trip, fixes: fixes, now: t0))))
            trail = try store.trail(tripID: "t1", from: nil, to: nil, limit: 100)
            // Back to what a hub before schema 4 wrote: fixes with AUTOINCREMENT.
            let v3 = SQLiteTripStore.fixesTable("fixes_v3").replacingOccurrences(of: "id INTEGER PRIMARY KEY,", with: "id INTEGER PRIMARY KEY AUTOINCREMENT,")
            let columns = SQLiteTripStore.fixesColumns
            store.withWriterConnection { db in
                try? db.exec("""
                    BEGIN IMMEDIATE; \(v3) INSERT INTO fixes_v3(\(columns)) SELECT \(columns) FROM fixes; DROP TABLE fixes;
                    ALTER TABLE fixes_v3 RENAME TO fixes; \(SQLiteTripStore.fixesIndexes) PRAGMA user_version = 3; COMMIT
                    """)
            }
            #expect(Self.scalar(store, "SELECT seq FROM sqlite_sequence WHERE name = 'fixes'") == 5)
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(Self.scalar(store, "PRAGMA user_version") == 4)
        #expect(Self.scalar(store, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'") == 0)
        #expect(Self.scalar(store, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('fixes_seq', 'fixes_trail')") == 2)
        #expect(try store.trail(tripID: "t1", from: nil, to: nil, limit: 100) == trail)
        #expect(Self.scalar(store, "SELECT sum(id) FROM fixes") == 15)  // ids 1 to 5, kept
        #expect(canonical(try #require(try store.loadTrips().first).trip) == canonical(trip))
        #expect(isSuccess(appendAndWait(store, [.fix(tripID: "t1", fix: fix(0.001, ts: t0 + 100_000, seq: 9), refusal: nil, receivedAt: t0)])))
        #expect(Self.scalar(store, "SELECT id FROM fixes WHERE seq = 9") == 6)
        // The unique (trip, seq) index still keeps a resend once.
        #expect(isSuccess(appendAndWait(store, [.fix(tripID: "t1", fix: fix(0.001, ts: t0 + 100_000, seq: 9), refusal: nil, receivedAt: t0)])))
        #expect(Self.scalar(store, "SELECT count(*) FROM fixes") == 6)
    }
}
