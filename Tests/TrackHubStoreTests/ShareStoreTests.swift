import Foundation
import Testing
import TrackHubCore
@testable import TrackHubStore

/// Share links (PROTOCOL 13) in the SQLite store: a revocation holds across a reopen, and a
/// schema 2 store gains the table. What both stores keep is `TripStoreContractTests`.
@Suite struct ShareStoreTests {
    static let issued = StoredShare(jti: "j-issued", trip: "T1", expiresAt: t0 + 86_400_000)
    static let revoked = StoredShare(jti: "j-revoked", trip: "T1", expiresAt: t0 + 86_400_000, revokedAt: t0 + 5)
    static let expired = StoredShare(jti: "j-expired", trip: "T2", expiresAt: t0 - 1)

    @Test func sqliteStoreKeepsRevocationsAcrossReopen() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            let first = StoredShare(jti: "j-revoked", trip: "T1", expiresAt: t0 + 86_400_000)
            #expect(isSuccess(appendAndWait(store, [.share(Self.issued), .share(first), .share(Self.expired)])))
            #expect(isSuccess(appendAndWait(store, [.share(Self.revoked), .forgetShares(expiredBefore: t0)])))
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(try store.loadShares() == [Self.issued, Self.revoked])
    }

    @Test func aSchemaTwoStoreIsMigratedToThree() throws {
        let dir = TempDir()
        defer { dir.cleanUp() }
        do {
            let store = try SQLiteTripStore(directory: dir.path)
            #expect(isSuccess(appendAndWait(store, [.device(DeviceStoreTests.phone)])))
            // Back to what a hub before share links wrote (schema 2).
            store.withWriterConnection { db in try? db.exec("DROP TABLE share_links; DROP TABLE webhook_targets; DROP TABLE webhook_positions; PRAGMA user_version = 2") }
            store.close()
        }
        let store = try SQLiteTripStore(directory: dir.path)
        defer { store.close() }
        #expect(try store.loadDevices() == [DeviceStoreTests.phone])
        #expect(try store.loadShares().isEmpty)
        #expect(isSuccess(appendAndWait(store, [.share(Self.revoked)])))
        #expect(try store.loadShares() == [Self.revoked])
    }
}
