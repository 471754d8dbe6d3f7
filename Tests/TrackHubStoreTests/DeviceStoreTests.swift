import Foundation
import Testing
import TrackHubCore
@testable import TrackHubStore

/// Devices and the fix attributes of phone apps (PROTOCOL 11) in the SQLite store: across a
/// reopen and a schema migration. What both stores keep is `TripStoreContractTests`.
@Suite struct DeviceStoreTests {
    static let phone = StoredDevice(id: "phone-0123456789ab", trip: "T1", name: "Ana", lastSeen: t0, lastPosition: GeoPoint(lat: 38.7, lon: -9.1))

    @Test func sqliteStoreKeepsDevicesAndFixAttributesAcrossReopen() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let fix = FixInput(lat: 1, lon: 2, ts: t0, altitudeM: 224.5, batteryPercent: 79)
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            #expect(isSuccess(appendAndWait(store, [.device(Self.phone), .device(StoredDevice(id: "a-first", trip: nil, name: nil))])))
            #expect(isSuccess(appendAndWait(store, [.deleteDevice(id: "a-first"), .fix(tripID: "T1", fix: fix, refusal: nil, receivedAt: t0)])))
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(try store.loadDevices() == [Self.phone])
        #expect(try store.recentFixes(tripID: "T1", count: 1).first?.fix == fix)
    }

    @Test func aSchemaOneStoreIsMigratedKeepingItsFixes() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            let fix = FixInput(lat: 1, lon: 2, ts: t0, seq: 7)
            #expect(isSuccess(appendAndWait(store, [.fix(tripID: "T1", fix: fix, refusal: nil, receivedAt: t0)])))
            // Back to what a hub before devices wrote (schema 1).
            store.withWriterConnection { db in
                try? db.exec("DROP TABLE share_links; DROP TABLE devices; DROP TABLE webhook_targets; DROP TABLE webhook_positions; ALTER TABLE fixes DROP COLUMN altitude; ALTER TABLE fixes DROP COLUMN battery; PRAGMA user_version = 1")
            }
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(try store.recentFixes(tripID: "T1", count: 1).first?.fix == FixInput(lat: 1, lon: 2, ts: t0, seq: 7))
        #expect(try store.loadDevices().isEmpty)
        #expect(isSuccess(appendAndWait(store, [.device(Self.phone)])))
        #expect(try store.loadDevices() == [Self.phone])
    }
}
