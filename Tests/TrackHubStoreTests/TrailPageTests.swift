import Testing
import TrackHubCore
@testable import TrackHubStore

/// Keyset-paged trail reads (`trailPage`) on both stores: same order as `trail`, pages that
/// join up exactly, and a mark that keeps out fixes stored later.
@Suite struct TrailPageTests {
    /// Fixes in an awkward order: out of order, without seq (sorting first at equal ts),
    /// two without seq at one ts.
    static let fixes: [FixInput] = [
        fix(0.001, ts: t0 + 10_000, seq: 1),
        fix(0.002, ts: t0 + 20_000, seq: 2),
        fix(0.0015, ts: t0 + 15_000, seq: 3),
        FixInput(lat: 0.0021, lon: 0, ts: t0 + 20_000),
        fix(0.003, ts: t0 + 30_000, seq: 5),
        FixInput(lat: 0.0031, lon: 0, ts: t0 + 30_000),
        FixInput(lat: 0.0032, lon: 0, ts: t0 + 30_000),
        fix(0.0025, ts: t0 + 20_000, seq: 4),
        fix(0.004, ts: t0 + 40_000, seq: 6),
    ]

    static func stored(_ store: any TripStore) {
        let records = fixes.map { StoreRecord.fix(tripID: "t", fix: $0, refusal: $0.seq == 3 ? .outOfOrder : nil, receivedAt: t0) }
        #expect(isSuccess(appendAndWait(store, [.tripState(makeTrip("t"), createdAt: t0, riderJSON: nil)] + records)))
    }

    /// Every page of `limit` fixes from the start, joined.
    static func paged(_ store: any TripStore, from: Int64? = nil, to: Int64? = nil, mark: Int64? = nil, limit: Int) throws -> [StoredFix] {
        var result: [StoredFix] = []
        var cursor: TrailCursor?
        var pages = 0
        repeat {
            let page = try store.trailPage(tripID: "t", after: cursor, from: from, to: to, storedUpTo: mark, limit: limit)
            #expect(page.fixes.count <= limit)
            result += page.fixes
            cursor = page.next
            pages += 1
        } while cursor != nil && pages < 100
        return result
    }

    static func check(_ store: any TripStore) throws {
        stored(store)
        let whole = try store.trail(tripID: "t", from: nil, to: nil, limit: 100)
        #expect(whole.map(\.fix) == [0, 2, 3, 1, 7, 5, 6, 4, 8].map { fixes[$0] }, "(ts, seq) order, no seq first, then as stored")
        for limit in 1...10 {
            #expect(try paged(store, limit: limit) == whole, "pages of \(limit)")
        }
        let window = try store.trail(tripID: "t", from: t0 + 15_000, to: t0 + 30_000, limit: 100)
        #expect(window.count == 7)
        #expect(try paged(store, from: t0 + 15_000, to: t0 + 30_000, limit: 2) == window)

        let mark = try store.fixMark()
        let late = fix(0.0022, ts: t0 + 20_000, seq: 10)
        #expect(isSuccess(appendAndWait(store, [.fix(tripID: "t", fix: late, refusal: .outOfOrder, receivedAt: t0)])))
        #expect(try store.fixMark() > mark)
        #expect(try paged(store, mark: mark, limit: 2) == whole, "a fix stored after the mark is left out")
        #expect(try paged(store, limit: 2).map(\.fix).contains(late))
        #expect(try store.trailPage(tripID: "nope", after: nil, from: nil, to: nil, storedUpTo: nil, limit: 5).fixes.isEmpty)
    }

    @Test func sqliteStorePagesTheTrail() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        try Self.check(store)
    }

    @Test func memoryStorePagesTheTrail() throws {
        let store = MemoryTripStore()
        defer { store.close() }
        try Self.check(store)
    }

    @Test func bothStoresAgreeOnTheOrder() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let sqlite = try SQLiteTripStore(directory: dir.path)
        defer { sqlite.close() }
        let memory = MemoryTripStore()
        Self.stored(sqlite)
        Self.stored(memory)
        #expect(try Self.paged(sqlite, limit: 3) == Self.paged(memory, limit: 3))
    }
}
