import CSQLite
import TrackHubCore

/// The read side of `SQLiteTripStore`: a read-only connection (WAL: it never blocks the
/// writer) with its statements, prepared on first use. Used under the store's read lock.
final class SQLiteReader {
    struct TripRow: Sendable {
        var key: Int64
        var id: String
        var createdAt: Int64
        var rider: [UInt8]?
        var state: [UInt8]
        var route: [UInt8]?
        var fixMark: Int64
    }

    let db: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]

    static let fixColumns = "seq, ts, lat, lon, duration_ms, speed_mps, heading, accuracy_m, reason, altitude, battery"
    static let tripKey = "(SELECT k FROM trips WHERE id = ?1)"

    init(connection: SQLiteConnection) {
        db = connection
    }

    private func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let s = statements[sql] {
            s.reset()
            return s
        }
        let s = try db.prepare(sql)
        statements[sql] = s
        return s
    }

    /// Reads a fix from columns `offset...offset+8` in `fixColumns` order.
    private static func fix(_ s: SQLiteStatement, offset: Int32 = 0) -> StoredFix {
        let fix = FixInput(
            lat: s.double(offset + 2), lon: s.double(offset + 3), ts: s.int64(offset + 1), seq: s.optionalInt64(offset),
            durationMs: s.optionalDouble(offset + 4), speedMps: s.optionalDouble(offset + 5),
            heading: s.optionalDouble(offset + 6), accuracyM: s.optionalDouble(offset + 7),
            altitudeM: s.optionalDouble(offset + 9), batteryPercent: s.optionalDouble(offset + 10))
        let refusal = s.text(offset + 8).flatMap(FixRefusal.init(rawValue:))
        return StoredFix(fix: fix, refusal: refusal)
    }

    /// Every device, ordered by id (bytewise).
    func devices() throws(SQLiteError) -> [StoredDevice] {
        let s = try statement("SELECT id, trip, name, last_seen, last_lat, last_lon FROM devices ORDER BY id")
        defer { s.reset() }
        var result: [StoredDevice] = []
        while try s.step() {
            let position: GeoPoint?
            if let lat = s.optionalDouble(4), let lon = s.optionalDouble(5) { position = GeoPoint(lat: lat, lon: lon) } else { position = nil }
            result.append(StoredDevice(
                id: s.text(0) ?? "", trip: s.text(1), name: s.text(2), lastSeen: s.optionalInt64(3), lastPosition: position))
        }
        return result
    }

    /// Every share link kept, ordered by `jti`.
    func shares() throws(SQLiteError) -> [StoredShare] {
        let s = try statement("SELECT jti, trip, expires_at, revoked_at FROM share_links ORDER BY jti")
        defer { s.reset() }
        var result: [StoredShare] = []
        while try s.step() {
            result.append(StoredShare(jti: s.text(0) ?? "", trip: s.text(1) ?? "", expiresAt: s.int64(2), revokedAt: s.optionalInt64(3)))
        }
        return result
    }

    func tripRows() throws(SQLiteError) -> [TripRow] {
        let s = try statement("SELECT k, id, created_at, rider, state, route, fix_mark FROM trips WHERE state IS NOT NULL ORDER BY k")
        defer { s.reset() }
        var rows: [TripRow] = []
        while try s.step() {
            rows.append(TripRow(
                key: s.int64(0), id: s.text(1) ?? "", createdAt: s.int64(2), rider: s.blob(3),
                state: s.blob(4) ?? [], route: s.blob(5), fixMark: s.int64(6)))
        }
        return rows
    }

    /// Every fix of a trip in judging order, with its id.
    func fixesForLoad(tripKey: Int64) throws(SQLiteError) -> [(Int64, FixInput)] {
        let s = try statement("SELECT id, \(Self.fixColumns) FROM fixes WHERE trip = ?1 ORDER BY id")
        defer { s.reset() }
        s.bind(1, tripKey)
        var result: [(Int64, FixInput)] = []
        while try s.step() { result.append((s.int64(0), Self.fix(s, offset: 1).fix)) }
        return result
    }

    func events(tripID: String, after: Int, limit: Int) throws(SQLiteError) -> [[UInt8]] {
        let s = try statement("SELECT body FROM events WHERE trip = \(Self.tripKey) AND n > ?2 ORDER BY n LIMIT ?3")
        defer { s.reset() }
        s.bind(1, tripID)
        s.bind(2, after)
        s.bind(3, limit)
        var result: [[UInt8]] = []
        while try s.step() { result.append(s.blob(0) ?? []) }
        return result
    }

    /// A page of the trail, keyset-paged on (ts, seq, id): the range on `ts` uses the
    /// `fixes_trail (trip, ts, seq)` index, whose order (row id last) is the one asked for.
    func trailPage(tripID: String, after: TrailCursor?, from: Int64?, to: Int64?, storedUpTo: Int64?, limit: Int) throws(SQLiteError) -> TrailPage {
        let s = try statement("""
            SELECT id, \(Self.fixColumns) FROM fixes WHERE trip = \(Self.tripKey) AND ts >= ?2 AND ts <= ?3 AND id <= ?4
            AND (ts > ?5 OR seq > ?6 OR (?6 IS NULL AND seq IS NOT NULL) OR (seq IS ?6 AND id > ?7))
            ORDER BY ts, seq, id LIMIT ?8
            """)
        defer { s.reset() }
        let cursor = after ?? TrailCursor(ts: Int64.min, seq: nil, n: Int64.min)
        s.bind(1, tripID)
        s.bind(2, max(from ?? Int64.min, cursor.ts))
        s.bind(3, to ?? Int64.max)
        s.bind(4, storedUpTo ?? Int64.max)
        s.bind(5, cursor.ts)
        s.bind(6, cursor.seq)
        s.bind(7, cursor.n)
        s.bind(8, limit)
        var fixes: [StoredFix] = []
        var last: Int64 = 0
        while try s.step() {
            last = s.int64(0)
            fixes.append(Self.fix(s, offset: 1))
        }
        guard fixes.count == limit, let final = fixes.last else { return TrailPage(fixes: fixes, next: nil) }
        return TrailPage(fixes: fixes, next: TrailCursor(ts: final.fix.ts, seq: final.fix.seq, n: last))
    }

    func fixMark() throws(SQLiteError) -> Int64 {
        let s = try statement("SELECT COALESCE(MAX(id), 0) FROM fixes")
        defer { s.reset() }
        return try s.step() ? s.int64(0) : 0
    }

    func recent(tripID: String, count: Int) throws(SQLiteError) -> [StoredFix] {
        let s = try statement("""
            SELECT \(Self.fixColumns) FROM fixes WHERE trip = \(Self.tripKey)
            ORDER BY ts DESC, seq DESC, id DESC LIMIT ?2
            """)
        defer { s.reset() }
        s.bind(1, tripID)
        s.bind(2, count)
        var result: [StoredFix] = []
        while try s.step() { result.append(Self.fix(s)) }
        return result.reversed()
    }

    func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(SQLiteError) -> Bool {
        let s: SQLiteStatement
        if let seq {
            s = try statement("SELECT 1 FROM fixes WHERE trip = \(Self.tripKey) AND seq = ?2")
            s.bind(2, seq)
        } else {
            s = try statement("SELECT 1 FROM fixes WHERE trip = \(Self.tripKey) AND ts = ?2 LIMIT 1")
            s.bind(2, ts)
        }
        defer { s.reset() }
        s.bind(1, tripID)
        return try s.step()
    }
}
