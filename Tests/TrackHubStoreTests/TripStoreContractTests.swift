import Dispatch
import Foundation
import Testing
import TrackHubCore
import TrackHubSync
@testable import TrackHubStore

/// The stores the contract runs over: every `TripStore` the hub can be given.
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqlite

    var testDescription: String { rawValue }

    /// A fresh, empty store of this kind for `body`; closed afterwards (and its files removed),
    /// whether `body` returns or throws.
    func withStore<T>(_ body: (any TripStore & WebhookPositionStore) throws -> T) throws -> T {
        switch self {
        case .memory:
            let store = MemoryTripStore()
            defer { store.close() }
            return try body(store)
        case .sqlite:
            let dir = TempDir()
            defer { dir.cleanUp() }
            let store = try SQLiteTripStore(directory: dir.path)
            defer { store.close() }
            return try body(store)
        }
    }
}

/// What `TripStore` promises (its doc comment and PROTOCOL 5 and 7), held by both stores:
/// each test runs once per backend. What only one backend does (SQLite's files, schema
/// migrations, reopening, group commit, its unique index) is in that backend's own tests.
@Suite struct TripStoreContractTests {
    @Test(arguments: StoreBackend.allCases)
    func roundTripsEveryRecordKind(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            var trip = makeTrip()
            let created = trip.created(now: t0)
            let rider = Array(#"{"id":"r1","name":"Ann \"A\""}"#.utf8)
            #expect(isSuccess(appendAndWait(store, [
                .tripState(trip, createdAt: t0, riderJSON: rider),
                .event(tripID: "t1", n: created.n, encoded: Array("created".utf8)),
            ])))
            let fixes = [
                fix(0.000, ts: t0 + 10_000, seq: 1),
                fix(0.004, ts: t0 + 20_000, seq: 2),
                fix(0.003, ts: t0 + 15_000, seq: 3),  // out of order
                FixInput(lat: 0.005, lon: 0, ts: t0 + 30_000),  // no seq, no optionals
            ]
            let records = drive(&trip, fixes: fixes, now: t0, rider: rider)
            #expect(isSuccess(appendAndWait(store, records)))

            let trail = try store.trail(tripID: "t1", from: nil, to: nil, limit: 100)
            #expect(trail.map(\.fix) == [fixes[0], fixes[2], fixes[1], fixes[3]])
            #expect(trail.map(\.refusal) == [nil, .outOfOrder, nil, nil])
            #expect(try store.events(tripID: "t1", after: 0, limit: 10).first == Array("created".utf8))
            #expect(try store.hasFix(tripID: "t1", seq: 3, ts: 0))
            #expect(try !store.hasFix(tripID: "t1", seq: 4, ts: 0))
            #expect(try store.hasFix(tripID: "t1", seq: nil, ts: t0 + 30_000))
            #expect(try !store.hasFix(tripID: "t1", seq: nil, ts: t0 + 30_001))
            #expect(try store.recentFixes(tripID: "t1", count: 2).map(\.fix) == [fixes[1], fixes[3]])
            let loaded = try store.loadTrips()
            #expect(loaded.count == 1)
            #expect(loaded.first?.riderJSON == rider)
            #expect(loaded.first?.createdAt == t0)
            #expect(loaded.first.map { canonical($0.trip) } == canonical(trip))
            #expect(try store.trail(tripID: "nope", from: nil, to: nil, limit: 10).isEmpty)
            #expect(store.isHealthy)
        }
    }

    /// The latest state of a trip is the one loaded, in a batch or across batches.
    @Test(arguments: StoreBackend.allCases)
    func theLatestStateOfEachTripIsLoaded(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            var a = makeTrip("a")
            let b = makeTrip("b", waypoints: [])
            _ = a.created(now: t0)
            let first = canonical(a)
            let moved = drive(&a, fixes: [fix(0.001, ts: t0 + 10_000, seq: 1)], now: t0)
            #expect(isSuccess(appendAndWait(store, [.tripState(b, createdAt: t0 + 1, riderJSON: nil)] + moved)))
            #expect(canonical(a) != first, "the fix moved the trip")
            _ = a.end(now: t0 + 60_000)
            #expect(isSuccess(appendAndWait(store, [.tripState(a, createdAt: t0, riderJSON: nil)])))
            let loaded = Dictionary(uniqueKeysWithValues: try store.loadTrips().map { ($0.trip.id, $0) })
            #expect(Set(loaded.keys) == ["a", "b"])
            #expect(loaded["a"].map { canonical($0.trip) } == canonical(a) && loaded["a"]?.trip.status == .ended)
            #expect(loaded["b"]?.createdAt == t0 + 1)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func completionsRunInSubmissionOrder(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            let order = HubMutex<[Int]>([])
            let done = DispatchSemaphore(value: 0)
            let count = 2000
            for i in 0..<count {
                let records: [StoreRecord] = [.fix(tripID: "t\(i % 7)", fix: fix(0, ts: t0 + Int64(i), seq: Int64(i)), refusal: nil, receivedAt: t0)]
                store.append(records) { result in
                    #expect(isSuccess(result))
                    order.withLock { $0.append(i) }
                    done.signal()
                }
            }
            for _ in 0..<count { done.wait() }
            #expect(order.withLock { $0 } == Array(0..<count))
            // Reads see every batch whose completion has run.
            #expect(try (0..<7).map { try store.trail(tripID: "t\($0)", from: nil, to: nil, limit: 1000).count }.reduce(0, +) == count)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func trailIsOrderedByTsThenSeqWithinFromTo(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            let input: [(Int64, Int64?)] = [(50, 5), (10, 2), (30, 9), (30, 3), (20, nil), (40, 4), (10, 1)]
            let records = input.map { StoreRecord.fix(tripID: "t", fix: fix(0, ts: t0 + $0.0, seq: $0.1), refusal: nil, receivedAt: t0) }
            appendAndWait(store, records)
            let all = try store.trail(tripID: "t", from: nil, to: nil, limit: 100).map { ($0.fix.ts - t0, $0.fix.seq) }
            #expect(all.map(\.0) == [10, 10, 20, 30, 30, 40, 50])
            #expect(all.map(\.1) == [1, 2, nil, 3, 9, 4, 5])
            let window = try store.trail(tripID: "t", from: t0 + 20, to: t0 + 40, limit: 100).map { $0.fix.ts - t0 }
            #expect(window == [20, 30, 30, 40])
            #expect(try store.trail(tripID: "t", from: t0 + 20, to: nil, limit: 2).map { $0.fix.ts - t0 } == [20, 30])
        }
    }

    /// Keyset-paged trail reads: the same order as `trail`, pages that join up exactly, and a
    /// mark that keeps out fixes stored later.
    @Test(arguments: StoreBackend.allCases)
    func pagesOfTheTrailJoinUpAndAMarkHoldsThemStill(_ backend: StoreBackend) throws {
        try backend.withStore { store in try TrailPaging.check(store) }
    }

    @Test(arguments: StoreBackend.allCases)
    func eventsAfterNWithLimit(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            appendAndWait(store, (1...10).map { StoreRecord.event(tripID: "t", n: $0, encoded: Array("e\($0)".utf8)) })
            #expect(try store.events(tripID: "t", after: 0, limit: 100).count == 10)
            #expect(try store.events(tripID: "t", after: 3, limit: 2) == [Array("e4".utf8), Array("e5".utf8)])
            #expect(try store.events(tripID: "t", after: 10, limit: 5).isEmpty)
            #expect(try store.events(tripID: "other", after: 0, limit: 5).isEmpty)
        }
    }

    /// A trip restored from a cluster snapshot keeps only its last events: the first one
    /// stored is not `n` 1, and `after` still counts in `n` (PROTOCOL 7, `since_event`).
    @Test(arguments: StoreBackend.allCases)
    func eventsAreFoundByTheirNumberWhereverTheyStart(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            appendAndWait(store, (5...9).map { StoreRecord.event(tripID: "t", n: $0, encoded: Array("e\($0)".utf8)) })
            #expect(try store.events(tripID: "t", after: 0, limit: 100).count == 5)
            #expect(try store.events(tripID: "t", after: 6, limit: 100) == [Array("e7".utf8), Array("e8".utf8), Array("e9".utf8)])
            #expect(try store.events(tripID: "t", after: 9, limit: 100).isEmpty)
            // An `n` stored again replaces the first; an earlier one takes its place in order.
            appendAndWait(store, [.event(tripID: "t", n: 7, encoded: Array("e7 again".utf8)), .event(tripID: "t", n: 3, encoded: Array("e3".utf8))])
            #expect(try store.events(tripID: "t", after: 6, limit: 2) == [Array("e7 again".utf8), Array("e8".utf8)])
            #expect(try store.events(tripID: "t", after: 0, limit: 2) == [Array("e3".utf8), Array("e5".utf8)])
        }
    }

    /// Devices, and the fix attributes of phone apps (PROTOCOL 11).
    @Test(arguments: StoreBackend.allCases)
    func keepsDevicesAndFixAttributes(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            let phone = DeviceStoreTests.phone
            #expect(isSuccess(appendAndWait(store, [.device(phone), .device(StoredDevice(id: "a-first", trip: nil, name: nil))])))
            #expect(try store.loadDevices() == [StoredDevice(id: "a-first", trip: nil, name: nil), phone], "ordered by id")
            #expect(isSuccess(appendAndWait(store, [.deleteDevice(id: "a-first")])))
            #expect(try store.loadDevices() == [phone])
            let fix = FixInput(lat: 1, lon: 2, ts: t0, altitudeM: 224.5, batteryPercent: 79)
            #expect(isSuccess(appendAndWait(store, [.fix(tripID: "T1", fix: fix, refusal: nil, receivedAt: t0)])))
            #expect(try store.recentFixes(tripID: "T1", count: 1).first?.fix == fix)
        }
    }

    /// Share links (PROTOCOL 13): the latest record of a `jti` is kept, so a revocation holds;
    /// links that expired are forgotten.
    @Test(arguments: StoreBackend.allCases)
    func keepsRevocationsAndForgetsExpiredShareLinks(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            let (issued, revoked, expired) = (ShareStoreTests.issued, ShareStoreTests.revoked, ShareStoreTests.expired)
            let first = StoredShare(jti: "j-revoked", trip: "T1", expiresAt: t0 + 86_400_000)
            #expect(isSuccess(appendAndWait(store, [.share(issued), .share(first), .share(expired)])))
            #expect(isSuccess(appendAndWait(store, [.share(revoked)])))
            #expect(try store.loadShares() == [expired, issued, revoked], "ordered by jti, the revocation kept")
            #expect(isSuccess(appendAndWait(store, [.forgetShares(expiredBefore: t0)])))
            #expect(try store.loadShares() == [issued, revoked])
        }
    }

    /// PROTOCOL 12: a webhook's delivery positions only move forward, and a trip's are
    /// forgotten with it.
    @Test(arguments: StoreBackend.allCases)
    func webhookPositionsOnlyMoveForward(_ backend: StoreBackend) throws {
        try backend.withStore { store throws in
            #expect(isSuccess(appendAndWait(store, [
                .webhook(.target(url: "http://a/", addedAt: 5, positions: ["T1": 3])),
                .webhook(.position(url: "http://a/", trip: "T2", delivered: 4)),
                .webhook(.position(url: "http://a/", trip: "T2", delivered: 2)),
                .webhook(.position(url: "http://a/", trip: "T1", delivered: 2)),
                .webhook(.position(url: "http://b/", trip: "T1", delivered: 1)),
            ])))
            let state = try store.loadWebhookState()
            #expect(state.targets == ["http://a/": 5])
            #expect(state.positions == ["http://a/": ["T1": 3, "T2": 4], "http://b/": ["T1": 1]])
            #expect(isSuccess(appendAndWait(store, [.webhook(.forgetTrip(trip: "T1"))])))
            #expect(try store.loadWebhookState().positions == ["http://a/": ["T2": 4]])
        }
    }
}

/// The trail fixtures and checks of `pagesOfTheTrailJoinUpAndAMarkHoldsThemStill`.
enum TrailPaging {
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
        let records = fixes.map { StoreRecord.fix(tripID: "t", fix: $0, refusal: $0.seq == 3 ? .outOfOrder : nil, receivedAt: t0) }
        #expect(isSuccess(appendAndWait(store, [.tripState(makeTrip("t"), createdAt: t0, riderJSON: nil)] + records)))
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
}
