import Dispatch
import Foundation
import Testing
import TrackHubCore
import TrackHubSync
@testable import TrackHubStore

/// `SQLiteTripStore.commitHereIfIdle`: a batch committed on the caller's thread while the
/// writer sleeps, and never beside the writer or ahead of what was queued before it.
@Suite struct CommitHereTests {
    /// Calls `commitHereIfIdle` until it commits (the writer goes back to sleep a moment after
    /// its last completion), with a deadline; nil if it never did.
    private func commitHereWhenIdle(_ store: SQLiteTripStore, _ records: [StoreRecord]) -> Result<Void, StoreError>? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let result = store.commitHereIfIdle(records) { return result }
            sched_yield()
        }
        return nil
    }

    @Test func anIdleStoreCommitsTheBatchOnTheCallersThread() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        var trip = makeTrip("t")
        #expect(isSuccess(appendAndWait(store, drive(&trip, fixes: [fix(0, ts: t0, seq: 0)], now: t0))))
        let before = store.committedTransactions
        let result = try #require(commitHereWhenIdle(store, drive(&trip, fixes: [fix(0.001, ts: t0 + 1000, seq: 1)], now: t0 + 1000)))
        #expect(isSuccess(result))
        #expect(store.batchesCommittedHere == 1)
        #expect(store.committedTransactions == before + 1)
        // Readable at once: the commit is done when the call returns.
        #expect(try store.trail(tripID: "t", from: nil, to: nil, limit: 10).map(\.fix.seq) == [0, 1])
        // And still the writer's afterwards.
        #expect(isSuccess(appendAndWait(store, drive(&trip, fixes: [fix(0.002, ts: t0 + 2000, seq: 2)], now: t0 + 2000))))
        #expect(try store.trail(tripID: "t", from: nil, to: nil, limit: 10).count == 3)
    }

    @Test func nothingIsCommittedHereWhileTheWriterHasWork() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        let release = store.pauseWriter()
        var trip = makeTrip("t")
        let done = DispatchSemaphore(value: 0)
        store.append(drive(&trip, fixes: [fix(0, ts: t0, seq: 0)], now: t0)) { _ in done.signal() }
        // The writer is busy (paused in a control item) with a batch queued behind it: a batch
        // committed here would go ahead of that one.
        #expect(store.commitHereIfIdle(drive(&trip, fixes: [fix(0.001, ts: t0 + 1000, seq: 1)], now: t0 + 1000)) == nil)
        release()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(store.batchesCommittedHere == 0)
        #expect(try store.trail(tripID: "t", from: nil, to: nil, limit: 10).map(\.fix.seq) == [0])
    }

    /// A batch appended while a commit runs here waits for it (the writer is not woken beside
    /// it), then is committed by the woken writer: it is neither lost nor stranded.
    @Test func aBatchAppendedDuringACommitHereIsCommittedAfterIt() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(isSuccess(appendAndWait(store, [])))
        // A batch big enough that the append below comes while it commits.
        let big = (0..<100_000).map { StoreRecord.fix(tripID: "big", fix: fix(0, ts: t0 + Int64($0), seq: Int64($0)), refusal: nil, receivedAt: t0) }
        let bigDone = DispatchSemaphore(value: 0)
        let bigResult = HubMutex<Result<Void, StoreError>?>(nil)
        Thread {
            let deadline = Date().addingTimeInterval(10)
            var result: Result<Void, StoreError>?
            while result == nil, Date() < deadline { result = store.commitHereIfIdle(big) }
            bigResult.withLock { $0 = result }
            bigDone.signal()
        }.start()
        let started = Date().addingTimeInterval(10)
        while !store.isCommittingHere, bigResult.withLock({ $0 == nil }), Date() < started { sched_yield() }
        let sawItRunning = store.isCommittingHere
        let small = DispatchSemaphore(value: 0)
        store.append([.fix(tripID: "small", fix: fix(0, ts: t0, seq: 0), refusal: nil, receivedAt: t0)]) { _ in small.signal() }
        #expect(small.wait(timeout: .now() + 10) == .success)
        #expect(bigDone.wait(timeout: .now() + 10) == .success)
        #expect(bigResult.withLock { $0.map(isSuccess) } == true)
        #expect(sawItRunning, "the append came after the commit here had ended: the case was not exercised")
        #expect(try store.trail(tripID: "small", from: nil, to: nil, limit: 10).count == 1)
        #expect(try store.fixMark() == 100_001)  // the small batch's fix numbered after the big one's
    }

    /// `--sync full`: a commit waits for an fsync, which the hub's loop must not: the writer's.
    @Test func aStoreThatSyncsEveryCommitNeverCommitsHere() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path, synchronous: .full)
        defer { store.close() }
        #expect(isSuccess(appendAndWait(store, [])))
        // An idle store would commit here within these tries (the test above waits for it).
        var committed = 0
        for _ in 0..<2_000 {
            if store.commitHereIfIdle([]) != nil { committed += 1 }
            sched_yield()
        }
        #expect(committed == 0)
        #expect(store.batchesCommittedHere == 0)
    }

    @Test func aClosedStoreCommitsNothingHere() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        store.close()
        #expect(store.commitHereIfIdle([.fix(tripID: "t", fix: fix(0, ts: t0, seq: 0), refusal: nil, receivedAt: t0)]) == nil)
    }
}
