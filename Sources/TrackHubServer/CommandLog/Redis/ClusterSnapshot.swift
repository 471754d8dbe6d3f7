import Foundation
import TrackHubCore
import TrackHubStore

/// A node's whole state at one point of the log, kept in Redis (`trackhub:snapshot`) so a
/// node that starts loads it and replays only the log after `positions`: start-up time
/// does not grow with history.
struct ClusterSnapshot: Codable, Sendable {
    static let version = 1

    struct TripRecord: Codable, Sendable {
        var trip: Trip
        var createdAt: Int64
        var rider: String?
        var frameSeq: Int
        var segmentSeq: Int
        var nextTickAt: Int64?
        var endedAt: Int64?
        /// The trip's last events as sent (JSON text), oldest first.
        var events: [String]
        /// The trip's last fixes (for the snapshot message's trail), oldest first.
        var trail: [TrailFix]
    }

    /// A share link (PROTOCOL 13), issued or revoked.
    struct ShareRecord: Codable, Sendable, Equatable {
        var jti: String
        var trip: String
        /// The token's `exp` (ms).
        var expiresAt: Int64
        /// The log time (ms) of its revocation; nil: still valid.
        var revokedAt: Int64?

        init(_ share: StoredShare) {
            jti = share.jti
            trip = share.trip
            expiresAt = share.expiresAt
            revokedAt = share.revokedAt
        }

        var stored: StoredShare { StoredShare(jti: jti, trip: trip, expiresAt: expiresAt, revokedAt: revokedAt) }
    }

    struct TrailFix: Codable, Sendable {
        var fix: FixInput
        var refusal: FixRefusal?
    }

    var version = ClusterSnapshot.version
    var partitions: Int
    /// Per partition, the last entry the state includes.
    var positions: [StreamID]
    /// Every log entry with a time below this was applied (the node's watermark then).
    var watermark: Int64
    var writtenBy: String
    var trips: [TripRecord]
    /// The devices (PROTOCOL 11) with their sightings; nil in a snapshot written before
    /// devices were shared.
    var devices: ClusterDevices?
    /// The share links not yet expired, revoked ones among them; nil in a snapshot written
    /// before links were shared.
    var shares: [ShareRecord]?

    func encoded() throws -> [UInt8] {
        Array(try JSONEncoder().encode(self))
    }

    static func decode(_ bytes: [UInt8]) throws -> ClusterSnapshot {
        try JSONDecoder().decode(ClusterSnapshot.self, from: Data(bytes))
    }

    /// What the node's own store needs to serve a trip restored from this snapshot.
    static func storeRecords(for record: TripRecord) -> [StoreRecord] {
        let rider = record.rider.map { Array($0.utf8) }
        var records: [StoreRecord] = [.tripState(record.trip.withoutSeenFixes, createdAt: record.createdAt, riderJSON: rider)]
        for fix in record.trail {
            records.append(.fix(tripID: record.trip.id, fix: fix.fix, refusal: fix.refusal, receivedAt: record.createdAt))
        }
        let firstN = record.trip.lastEventNumber - record.events.count + 1
        for (offset, event) in record.events.enumerated() {
            records.append(.event(tripID: record.trip.id, n: firstN + offset, encoded: Array(event.utf8)))
        }
        return records
    }
}
