import Foundation
import Testing
import TrackHubCore
@testable import TrackHubStore

/// PROTOCOL 12 in the SQLite store: webhook delivery positions are durable, and a schema 2
/// store gains the webhook tables keeping what it had. That positions only move forward, in
/// both stores, is `TripStoreContractTests`.
@Suite struct WebhookStoreTests {
    @Test func positionsSurviveAReopen() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            #expect(isSuccess(appendAndWait(store, [
                .webhook(.target(url: "http://a/", addedAt: 5, positions: ["T1": 3])),
                .webhook(.position(url: "http://a/", trip: "T2", delivered: 4)),
                .webhook(.position(url: "http://a/", trip: "T2", delivered: 2)),
                .webhook(.position(url: "http://b/", trip: "T1", delivered: 1)),
            ])))
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        let state = try store.loadWebhookState()
        #expect(state.targets == ["http://a/": 5])
        #expect(state.positions == ["http://a/": ["T1": 3, "T2": 4], "http://b/": ["T1": 1]])
        #expect(isSuccess(appendAndWait(store, [.webhook(.forgetTrip(trip: "T1"))])))
        #expect(try store.loadWebhookState().positions == ["http://a/": ["T2": 4]])
    }

    @Test func aSchemaTwoStoreGainsTheWebhookTables() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            let fix = FixInput(lat: 1, lon: 2, ts: 1_700_000_000_000, seq: 7)
            #expect(isSuccess(appendAndWait(store, [.fix(tripID: "T1", fix: fix, refusal: nil, receivedAt: 0)])))
            store.withWriterConnection { db in
                try? db.exec("DROP TABLE webhook_targets; DROP TABLE webhook_positions; DROP TABLE share_links; PRAGMA user_version = 2")
            }
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(try store.recentFixes(tripID: "T1", count: 1).count == 1)
        #expect(try store.loadWebhookState() == WebhookStoredState())
        #expect(isSuccess(appendAndWait(store, [.webhook(.position(url: "u", trip: "T1", delivered: 1))])))
        #expect(try store.loadWebhookState().positions == ["u": ["T1": 1]])
    }
}
