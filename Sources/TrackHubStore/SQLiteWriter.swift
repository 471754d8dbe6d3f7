import CSQLite
import Foundation
import TrackHubCore

/// The write side of `SQLiteTripStore`: the read-write connection, its prepared statements and
/// caches. Used only on the writer thread (hence `@unchecked Sendable`: it is created on the
/// opening thread and then handed over, never shared).
final class SQLiteWriter: @unchecked Sendable {
    let db: SQLiteConnection
    private let begin: SQLiteStatement
    private let commitStatement: SQLiteStatement
    private let insertFix: SQLiteStatement
    private let insertEvent: SQLiteStatement
    private let upsertDevice: SQLiteStatement
    private let deleteDevice: SQLiteStatement
    private let upsertShare: SQLiteStatement
    private let forgetShares: SQLiteStatement
    private let upsertTrip: SQLiteStatement
    private let tripKeyByID: SQLiteStatement
    private let insertTripPlaceholder: SQLiteStatement
    /// The `.webhook` records' statements (SQLiteWebhookWrites.swift).
    private let webhookWrites: SQLiteWebhookWrites

    /// trip id → trips.k, for rows known to be committed.
    private var tripKeys: [String: Int64] = [:]
    /// trip id → the route last written for it (kept alive, so `==` is mostly an identity test).
    private var writtenRoutes: [String: Route?] = [:]
    /// The highest fixes.id written (committed) so far, or named by a stored `fix_mark`:
    /// the next fix gets one more (`SQLiteTripStore.fixesTable`).
    private var lastFixID: Int64 = 0

    private struct PendingState {
        var trip: Trip
        var createdAt: Int64
        var rider: [UInt8]?
        var fixMark: Int64
    }

    init(connection: SQLiteConnection) throws(SQLiteError) {
        db = connection
        begin = try db.prepare("BEGIN IMMEDIATE")
        commitStatement = try db.prepare("COMMIT")
        insertFix = try db.prepare("""
            INSERT OR IGNORE INTO fixes(trip, seq, ts, lat, lon, duration_ms, speed_mps, heading, accuracy_m, reason, received_at, altitude, battery, id)
            VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            """)
        upsertDevice = try db.prepare("""
            INSERT OR REPLACE INTO devices(id, trip, name, last_seen, last_lat, last_lon) VALUES(?1, ?2, ?3, ?4, ?5, ?6)
            """)
        deleteDevice = try db.prepare("DELETE FROM devices WHERE id = ?1")
        upsertShare = try db.prepare("INSERT OR REPLACE INTO share_links(jti, trip, expires_at, revoked_at) VALUES(?1, ?2, ?3, ?4)")
        forgetShares = try db.prepare("DELETE FROM share_links WHERE expires_at < ?1")
        insertEvent = try db.prepare("INSERT OR REPLACE INTO events(trip, n, body) VALUES(?1, ?2, ?3)")
        upsertTrip = try db.prepare("""
            INSERT INTO trips(id, status, created_at, ended_at, rider, state, route, fix_mark, updated_at)
            VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            ON CONFLICT(id) DO UPDATE SET status = excluded.status, created_at = excluded.created_at,
                ended_at = excluded.ended_at, rider = excluded.rider, state = excluded.state,
                route = CASE WHEN ?10 THEN excluded.route ELSE trips.route END,
                fix_mark = excluded.fix_mark, updated_at = excluded.updated_at
            RETURNING k
            """)
        tripKeyByID = try db.prepare("SELECT k FROM trips WHERE id = ?1")
        insertTripPlaceholder = try db.prepare("INSERT INTO trips(id) VALUES(?1) RETURNING k")
        webhookWrites = try SQLiteWebhookWrites(db: db)
        // A purge may have deleted the newest fixes, but not the marks that named them.
        lastFixID = try db.scalarInt("SELECT max((SELECT COALESCE(max(id), 0) FROM fixes), (SELECT COALESCE(max(fix_mark), 0) FROM trips))") ?? 0
        purgeFindTrip = try db.prepare("SELECT k, id FROM trips WHERE ended_at IS NOT NULL AND ended_at < ?1 ORDER BY ended_at LIMIT 1")
        purgeFixes = try db.prepare("DELETE FROM fixes WHERE id IN (SELECT id FROM fixes WHERE trip = ?1 LIMIT ?2)")
        purgeEvents = try db.prepare("DELETE FROM events WHERE trip = ?1 AND n IN (SELECT n FROM events WHERE trip = ?1 LIMIT ?2)")
        purgeTrip = try db.prepare("DELETE FROM trips WHERE k = ?1")
    }

    // MARK: - Batches

    /// Writes the batches in one transaction. On any error rolls back: nothing of them is stored.
    func commit(_ batches: [[StoreRecord]]) -> Result<Void, StoreError> {
        var newKeys: [String] = []
        var routesToRemember: [(String, Route?)] = []
        let fixIDBefore = lastFixID
        do {
            try begin.run()
            var states: [String: PendingState] = [:]
            var stateOrder: [String] = []
            let now = storeClockMillis()
            for records in batches {
                for record in records {
                    switch record {
                    case .fix(let tripID, let fix, let refusal, let receivedAt):
                        // A duplicate is, by definition, stored already (PROTOCOL 7: never twice).
                        if refusal == .duplicate { continue }
                        let key = try tripKey(tripID, newKeys: &newKeys)
                        let s = insertFix
                        s.bind(1, key)
                        s.bind(2, fix.seq)
                        s.bind(3, fix.ts)
                        s.bind(4, fix.lat)
                        s.bind(5, fix.lon)
                        s.bind(6, fix.durationMs)
                        s.bind(7, fix.speedMps)
                        s.bind(8, fix.heading)
                        s.bind(9, fix.accuracyM)
                        s.bind(10, refusal?.rawValue)
                        s.bind(11, receivedAt)
                        s.bind(12, fix.altitudeM)
                        s.bind(13, fix.batteryPercent)
                        s.bind(14, lastFixID + 1)
                        try s.run()
                        if db.changes > 0 { lastFixID += 1 }
                    case .device(let device):
                        let s = upsertDevice
                        s.bind(1, device.id)
                        s.bind(2, device.trip)
                        s.bind(3, device.name)
                        s.bind(4, device.lastSeen)
                        s.bind(5, device.lastPosition?.lat)
                        s.bind(6, device.lastPosition?.lon)
                        try s.run()
                    case .deleteDevice(let id):
                        deleteDevice.bind(1, id)
                        try deleteDevice.run()
                    case .share(let share):
                        upsertShare.bind(1, share.jti)
                        upsertShare.bind(2, share.trip)
                        upsertShare.bind(3, share.expiresAt)
                        upsertShare.bind(4, share.revokedAt)
                        try upsertShare.run()
                    case .forgetShares(let before):
                        forgetShares.bind(1, before)
                        try forgetShares.run()
                    case .webhook(let record):
                        try webhookWrites.write(record)
                    case .event(let tripID, let n, let encoded):
                        let key = try tripKey(tripID, newKeys: &newKeys)
                        insertEvent.bind(1, key)
                        insertEvent.bind(2, n)
                        insertEvent.bind(3, blob: encoded)
                        try insertEvent.run()
                    case .tripState(let trip, let createdAt, let riderJSON):
                        if states[trip.id] == nil { stateOrder.append(trip.id) }
                        states[trip.id] = PendingState(trip: trip, createdAt: createdAt, rider: riderJSON, fixMark: lastFixID)
                    }
                }
            }
            for id in stateOrder {
                guard let state = states[id] else { continue }
                let encoded: [UInt8]
                do {
                    encoded = try SQLiteTripCodec.encodeState(state.trip)
                } catch {
                    throw SQLiteError(code: SQLITE_MISUSE, message: "trip \(id): cannot encode its state: \(error)")
                }
                let route = state.trip.route
                let routeChanged: Bool
                if let known = writtenRoutes[id] { routeChanged = known != route } else { routeChanged = true }
                let s = upsertTrip
                s.bind(1, id)
                s.bind(2, state.trip.status.rawValue)
                s.bind(3, state.createdAt)
                s.bind(4, state.trip.endedAt)
                s.bind(5, blob: state.rider)
                s.bind(6, blob: encoded)
                do {
                    s.bind(7, blob: routeChanged ? try SQLiteTripCodec.encodeRoute(route) : nil)
                } catch {
                    throw SQLiteError(code: SQLITE_MISUSE, message: "trip \(id): cannot encode its route: \(error)")
                }
                s.bind(8, state.fixMark)
                s.bind(9, now)
                s.bind(10, routeChanged ? 1 : 0)
                defer { s.reset() }
                guard try s.step() else { throw SQLiteError(code: SQLITE_ERROR, message: "trip \(id): upsert returned no key") }
                if tripKeys[id] == nil {
                    tripKeys[id] = s.int64(0)
                    newKeys.append(id)
                }
                routesToRemember.append((id, route))
            }
            try commitStatement.run()
        } catch {
            db.exec(ignoringErrors: "ROLLBACK")
            for id in newKeys { tripKeys[id] = nil }
            lastFixID = fixIDBefore
            return .failure(.unavailable("commit failed: \(error)"))
        }
        for (id, route) in routesToRemember { writtenRoutes[id] = route }
        return .success(())
    }

    /// The trips.k of a trip, creating a placeholder row (no state yet) when unknown.
    private func tripKey(_ id: String, newKeys: inout [String]) throws(SQLiteError) -> Int64 {
        if let key = tripKeys[id] { return key }
        tripKeyByID.bind(1, id)
        defer { tripKeyByID.reset() }
        let key: Int64
        if try tripKeyByID.step() {
            key = tripKeyByID.int64(0)
        } else {
            insertTripPlaceholder.bind(1, id)
            defer { insertTripPlaceholder.reset() }
            guard try insertTripPlaceholder.step() else { throw SQLiteError(code: SQLITE_ERROR, message: "trip \(id): insert returned no key") }
            key = insertTripPlaceholder.int64(0)
        }
        tripKeys[id] = key
        newKeys.append(id)
        return key
    }

    // MARK: - Retention

    private let purgeFindTrip: SQLiteStatement
    private let purgeFixes: SQLiteStatement
    private let purgeEvents: SQLiteStatement
    private let purgeTrip: SQLiteStatement

    private struct PurgeJob {
        var before: Int64
        var batch: Int
        var completion: @Sendable ([String]) -> Void
        var purged: [String] = []
        var current: (key: Int64, id: String)?
    }

    private var purge: PurgeJob?
    var hasPurgeWork: Bool { purge != nil }

    func startPurge(before: Int64, batch: Int, completion: @escaping @Sendable ([String]) -> Void) {
        if purge != nil {
            // One purge at a time; the running one deletes these trips too.
            completion([])
            return
        }
        purge = PurgeJob(before: before, batch: batch, completion: completion)
    }

    /// One small transaction of the running purge: at most `batch` fixes or events, or the trip row.
    func purgeStep() {
        guard var job = purge else { return }
        do {
            if job.current == nil {
                purgeFindTrip.bind(1, job.before)
                defer { purgeFindTrip.reset() }
                if try purgeFindTrip.step() {
                    job.current = (purgeFindTrip.int64(0), purgeFindTrip.text(1) ?? "")
                } else {
                    purge = nil
                    job.completion(job.purged)
                    return
                }
            }
            guard let current = job.current else { return }
            try begin.run()
            purgeFixes.bind(1, current.key)
            purgeFixes.bind(2, job.batch)
            try purgeFixes.run()
            var deleted = db.changes
            if deleted < job.batch {
                purgeEvents.bind(1, current.key)
                purgeEvents.bind(2, job.batch - deleted)
                try purgeEvents.run()
                deleted += db.changes
                if deleted < job.batch {
                    purgeTrip.bind(1, current.key)
                    try purgeTrip.run()
                    job.purged.append(current.id)
                    job.current = nil
                }
            }
            try commitStatement.run()
            if job.current == nil {
                tripKeys[current.id] = nil
                writtenRoutes[current.id] = nil
            }
            purge = job
        } catch {
            // Try again later (the next purge call); report what was deleted so far.
            db.exec(ignoringErrors: "ROLLBACK")
            purge = nil
            job.completion(job.purged)
        }
    }

    func finishPurge() {
        if let job = purge {
            purge = nil
            job.completion(job.purged)
        }
    }

    func close() {
        db.exec(ignoringErrors: "PRAGMA optimize")
    }
}

extension SQLiteConnection {
    func exec(ignoringErrors sql: String) {
        _ = sqlite3_exec(handle, sql, nil, nil, nil)
    }
}

/// Milliseconds since the epoch.
func storeClockMillis() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1000).rounded())
}
