import CSQLite
import Dispatch
import Foundation
import Glibc
import Synchronization
import TrackHubCore
import TrackHubSync

/// A store that can delete ended trips after the retention period (PROTOCOL 5, `--retain-days`).
public protocol RetainingTripStore: AnyObject, Sendable {
    /// Deletes every trip that ended before `before` (ms since the epoch) with its fixes and
    /// events, in transactions of at most `batch` rows interleaved with the hub's own writes,
    /// then calls `completion` (on a store thread) with the ids of the trips deleted.
    func purgeEnded(before: Int64, batch: Int, completion: @escaping @Sendable ([String]) -> Void)
}

/// The durable store of a single hub (PROTOCOL 7): a SQLite database, `trackhub.db`, in WAL
/// mode in the `--data` directory.
///
/// Threads: one writer thread owns the read-write connection, except while it sleeps with
/// nothing queued: then `commitHereIfIdle` may borrow it and commit one batch on the caller's
/// thread (the hub's service thread, for a fix: no hand-off to the writer and back, two
/// wake-ups fewer; BENCHMARKS.md, "The fix path"). `append` puts the batch on a
/// pending queue (a mutex-protected array) and wakes the writer if it sleeps; the writer takes
/// *everything* queued, writes it in one `BEGIN IMMEDIATE … COMMIT` (group commit: batches
/// that arrive while a commit runs go into the next one), then calls the completions in
/// submission order on the writer thread. Within a transaction only the last `tripState` of
/// each trip is written. Reads (`trail`, `events`, `recentFixes`, `hasFix`, `loadTrips`) use a
/// second, read-only connection under its own lock: WAL readers do not block the writer.
///
/// Bounds: at most `maxPendingRecords` records (default 100 000) wait for the writer; a batch
/// that would go past that fails at once with `unavailable` (still completed in order), so a
/// stalled disk costs bounded memory and the hub answers `unavailable` instead of acking.
///
/// Failures: a failed statement or commit (disk full, I/O error) rolls the transaction back,
/// completes every batch in it with `.failure(.unavailable)` — nothing of it is stored — and
/// `isHealthy` is false until a later commit succeeds.
///
/// Durability: `synchronous=NORMAL` (default): a committed transaction is in the WAL file
/// before its completion runs, so it survives a crash of the process (SIGKILL); after a power
/// cut the last transactions before the cut may be missing (the database stays consistent).
/// `synchronous=FULL` (`--sync full`): the WAL is fsync'ed at every commit, so acked fixes
/// also survive a power cut, at the price of one fsync per group commit.
public final class SQLiteTripStore: TripStore, RetainingTripStore, @unchecked Sendable {
    /// SQLite's `PRAGMA synchronous` for the write connection (`--sync`): `normal` survives a
    /// process crash, `full` also a power cut (one fsync per group commit).
    public enum Synchronous: String, Sendable {
        case normal = "NORMAL"
        case full = "FULL"
    }

    /// The database file's name in the data directory.
    public static let fileName = "trackhub.db"
    /// The schema this build writes, kept in `PRAGMA user_version`.
    public static let schemaVersion: Int64 = 4
    /// Records that may wait for the writer at most, unless the caller passes another bound.
    public static let defaultMaxPendingRecords = 100_000

    /// The data directory holding the database (`--data`, or its `cluster-node/` in cluster mode).
    public let directory: String
    /// The database file.
    public let path: String
    /// Records that may wait for the writer; a batch that would go past it fails `unavailable`.
    public let maxPendingRecords: Int
    /// `commitHereIfIdle` commits on the caller's thread: not under `--sync full`, whose
    /// commit waits for an fsync (milliseconds the caller, the hub's loop, must not block for).
    public let commitsOnCallersThread: Bool

    typealias Completion = @Sendable (Result<Void, StoreError>) -> Void

    enum Work: Sendable {
        case batch([StoreRecord], Completion, preFailed: StoreError?)
        case control(@Sendable () -> Void)
        case purge(before: Int64, batch: Int, completion: @Sendable ([String]) -> Void)
    }

    struct Pending {
        var items: [Work] = []
        var records = 0
        var writerWaiting = false
        /// A caller of `commitHereIfIdle` holds the write connection: the writer is not woken
        /// until it gives it back (appends meanwhile wait in `items`).
        var committingHere = false
        var closed = false
    }

    private let pending = HubMutex(Pending())
    private let wake = DispatchSemaphore(value: 0)
    private let writerStopped = DispatchSemaphore(value: 0)
    private let healthy = Atomic<Bool>(true)
    private let transactions = Atomic<Int>(0)
    private let committedHere = Atomic<Int>(0)
    private let writer: SQLiteWriter
    /// Runs the WAL checkpoints off the writer's commits.
    private let checkpointer: SQLiteCheckpointer
    private let reader: HubMutex<SQLiteReader>
    private let closeOnce = HubMutex(false)

    /// Opens (creating if needed) the store in `directory`.
    /// - Throws: `StoreError.unusable(path:reason:)` naming the directory or the database file
    ///   when it cannot be created, opened, written, or is not a TrackHub store of this version.
    public init(directory: String, synchronous: Synchronous = .normal, maxPendingRecords: Int = SQLiteTripStore.defaultMaxPendingRecords) throws(StoreError) {
        self.directory = directory
        self.path = (directory as NSString).appendingPathComponent(Self.fileName)
        self.maxPendingRecords = maxPendingRecords
        self.commitsOnCallersThread = synchronous == .normal
        try Self.prepareDirectory(directory)
        try Self.createPrivately(path)
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, readOnly: false)
            try Self.setUp(connection, synchronous: synchronous)
        } catch {
            throw StoreError.unusable(path: path, reason: error.message)
        }
        try Self.matchSidecarModes(path)
        do {
            writer = try SQLiteWriter(connection: connection)
            checkpointer = try SQLiteCheckpointer(path: path, synchronous: synchronous.rawValue, writer: connection)
            let readConnection = try SQLiteConnection(path: path, readOnly: true)
            try readConnection.exec("PRAGMA busy_timeout=5000")
            reader = HubMutex(SQLiteReader(connection: readConnection))
        } catch {
            throw StoreError.unusable(path: path, reason: error.message)
        }
        let thread = Thread { [self] in writerLoop() }
        thread.name = "trackhub-store-writer"
        thread.start()
    }

    deinit { close() }

    /// A data directory the hub creates is 0750, the database files 0640 (docs/security.md),
    /// whatever the umask. An existing directory or database keeps its mode.
    static let directoryMode: mode_t = 0o750
    static let fileMode: mode_t = 0o640

    /// Creates the database file 0640 before SQLite opens it (SQLite would create it
    /// 0644 less the umask); an existing file is left as it is.
    private static func createPrivately(_ path: String) throws(StoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        if fd < 0 {
            if errno == EEXIST { return }
            throw .unusable(path: path, reason: "cannot create the database: \(String(cString: strerror(errno)))")
        }
        defer { _ = Glibc.close(fd) }
        guard fchmod(fd, fileMode) == 0 else {
            throw .unusable(path: path, reason: "cannot set its mode: \(String(cString: strerror(errno)))")
        }
    }

    /// The -wal and -shm files (there once the connection is in WAL mode) get the database
    /// file's mode, whatever the umask: 0640 for a store the hub created, an operator's
    /// choice for one they changed.
    private static func matchSidecarModes(_ path: String) throws(StoreError) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        for suffix in ["-wal", "-shm"] where chmod(path + suffix, info.st_mode & 0o777) != 0 && errno != ENOENT {
            throw .unusable(path: path + suffix, reason: "cannot set its mode: \(String(cString: strerror(errno)))")
        }
    }

    private static func prepareDirectory(_ directory: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .unusable(path: directory, reason: "is not a directory") }
        } else {
            // mkdir -p, with the system's reason when it fails.
            var prefix = directory.hasPrefix("/") ? "/" : ""
            for component in directory.split(separator: "/") {
                prefix += component
                if mkdir(prefix, directoryMode) == 0 {
                    // mkdir applies the umask; the mode is set as created, whatever it is.
                    guard chmod(prefix, directoryMode) == 0 else {
                        throw .unusable(path: directory, reason: "cannot set the data directory's mode: \(String(cString: strerror(errno)))")
                    }
                } else if errno != EEXIST {
                    throw .unusable(path: directory, reason: "cannot create the data directory: \(String(cString: strerror(errno)))")
                }
                prefix += "/"
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw .unusable(path: directory, reason: "the data directory is not writable: \(String(cString: strerror(errno)))")
        }
    }

    /// Pragmas, schema (created or checked) and a write probe, so an unwritable file fails here.
    private static func setUp(_ db: SQLiteConnection, synchronous: Synchronous) throws(SQLiteError) {
        try db.exec("PRAGMA busy_timeout=5000")
        let version = try db.scalarInt("PRAGMA user_version") ?? 0
        let mode = try db.scalarText("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "cannot switch to WAL mode (journal_mode is \(mode ?? "unknown"))")
        }
        try db.exec("PRAGMA synchronous=\(synchronous.rawValue); PRAGMA foreign_keys=OFF; PRAGMA cache_size=-16000")
        switch version {
        case 0:
            let tables = try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
            guard tables == 0 else {
                throw SQLiteError(code: SQLITE_ERROR, message: "not a TrackHub store (it has tables but no schema version)")
            }
            try db.exec(Self.schema)
        case 1:
            // Version 1 (before devices): fixes gain altitude and battery, devices a table;
            // then on as from version 2.
            try db.exec(Self.migrationFrom1)
            try db.exec(Self.migrationFrom2)
            try db.exec(Self.migrationFrom3)
        case 2:
            // Version 2 (before webhooks and share links): their tables; then as from 3.
            try db.exec(Self.migrationFrom2)
            try db.exec(Self.migrationFrom3)
        case 3:
            // Version 3 (fixes with AUTOINCREMENT): the fixes table rebuilt without it.
            try db.exec(Self.migrationFrom3)
        case schemaVersion:
            break
        default:
            throw SQLiteError(code: SQLITE_ERROR, message: "schema version \(version) is not supported by this trackhub (it reads version \(schemaVersion))")
        }
        try db.exec("BEGIN IMMEDIATE; INSERT OR REPLACE INTO meta(key, value) VALUES('opened_at', \(Int64(Date().timeIntervalSince1970 * 1000))); COMMIT")
    }

    static let schema = """
    BEGIN IMMEDIATE;
    CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
    -- One row per trip. `state` is the Trip's JSON without route and seen keys (SQLiteTripCodec);
    -- `fix_mark` is the highest fixes.id the state had judged.
    CREATE TABLE trips(
        k INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        status TEXT,
        created_at INTEGER,
        ended_at INTEGER,
        rider BLOB,
        state BLOB,
        route BLOB,
        fix_mark INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER
    );
    CREATE INDEX trips_ended ON trips(ended_at) WHERE ended_at IS NOT NULL;
    \(fixesTable("fixes"))
    \(fixesIndexes)
    -- Each trip's events, numbered from 1, with their wire encoding as first sent.
    CREATE TABLE events(trip INTEGER NOT NULL, n INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY(trip, n)) WITHOUT ROWID;
    \(devicesTable)
    \(webhookTables)
    \(sharesTable)
    PRAGMA user_version = 4;
    COMMIT;
    """

    /// Every fix as received, applied or not (`reason`), in judging order (`id`).
    ///
    /// `id` is given by the writer (`SQLiteWriter.lastFixID` + 1), one more than the highest it
    /// ever gave or any trip's `fix_mark` names, so ids only rise even after a purge deleted
    /// the newest fixes: a trip's `fix_mark` then never covers a fix stored after its state.
    /// Not `AUTOINCREMENT`, which promises the same through the `sqlite_sequence` table: one
    /// B-tree page more in every commit, a quarter of a one-fix commit's WAL bytes
    /// (BENCHMARKS.md, "The fix path").
    static func fixesTable(_ name: String) -> String {
        """
        CREATE TABLE \(name)(
            id INTEGER PRIMARY KEY,
            trip INTEGER NOT NULL,
            seq INTEGER,
            ts INTEGER NOT NULL,
            lat REAL NOT NULL,
            lon REAL NOT NULL,
            duration_ms REAL,
            speed_mps REAL,
            heading REAL,
            accuracy_m REAL,
            reason TEXT,
            received_at INTEGER NOT NULL,
            altitude REAL,
            battery REAL
        );
        """
    }

    /// The fixes' indexes: a resend kept once (`fixes_seq`), the trail in time order.
    static let fixesIndexes = """
    CREATE UNIQUE INDEX fixes_seq ON fixes(trip, seq) WHERE seq IS NOT NULL;
    CREATE INDEX fixes_trail ON fixes(trip, ts, seq);
    """

    /// The columns of `fixes`, in order.
    static let fixesColumns = "id, trip, seq, ts, lat, lon, duration_ms, speed_mps, heading, accuracy_m, reason, received_at, altitude, battery"

    /// From schema 3: `fixes` rebuilt without `AUTOINCREMENT` (SQLite cannot drop it in
    /// place), every row with its id; the indexes made again. Once, at the first start of
    /// this build, in one transaction: about two seconds per million fixes here (and as many
    /// WAL bytes as the table, given back at the next checkpoint).
    static let migrationFrom3 = """
    BEGIN IMMEDIATE;
    \(fixesTable("fixes_v4"))
    INSERT INTO fixes_v4(\(fixesColumns)) SELECT \(fixesColumns) FROM fixes;
    DROP TABLE fixes;
    ALTER TABLE fixes_v4 RENAME TO fixes;
    \(fixesIndexes)
    PRAGMA user_version = 4;
    COMMIT;
    """

    /// Registered phones (PROTOCOL 11), by id.
    static let devicesTable = """
    CREATE TABLE devices(id TEXT PRIMARY KEY, trip TEXT, name TEXT, last_seen INTEGER, last_lat REAL, last_lon REAL) WITHOUT ROWID;
    """

    /// Share links (PROTOCOL 13) by `jti`: issued and revoked ones, until their token expires
    /// (`expires_at`, ms), so a revocation holds across restarts. Its own constant: schema 3
    /// may gain other tables in the same migration.
    static let sharesTable = """
    CREATE TABLE share_links(jti TEXT PRIMARY KEY, trip TEXT NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER) WITHOUT ROWID;
    CREATE INDEX share_links_expiry ON share_links(expires_at);
    """

    /// From schema 2: nothing existing changes; the webhook and share-link tables are added.
    static let migrationFrom2 = """
    BEGIN IMMEDIATE;
    \(webhookTables)
    \(sharesTable)
    PRAGMA user_version = 3;
    COMMIT;
    """

    /// From schema 1: every existing row keeps its values (the new columns are NULL).
    static let migrationFrom1 = """
    BEGIN IMMEDIATE;
    ALTER TABLE fixes ADD COLUMN altitude REAL;
    ALTER TABLE fixes ADD COLUMN battery REAL;
    \(devicesTable)
    PRAGMA user_version = 2;
    COMMIT;
    """

    // MARK: - TripStore

    /// False from a failed statement or commit until a later commit succeeds.
    public var isHealthy: Bool { healthy.load(ordering: .relaxed) }

    /// Waits until a checkpoint on its own thread has run (since the store opened), at most
    /// `timeoutS`; false when none did (tests).
    func waitForBackgroundCheckpoint(timeoutS: Double) -> Bool {
        checkpointer.checkpointed.wait(timeout: .now() + timeoutS) == .success
    }

    /// WAL checkpoints run so far: on their own thread, and by the writer itself (only when
    /// that thread fell behind), and the most pages the WAL held (`SQLiteCheckpointer`).
    public var walCheckpoints: (background: Int, byWriter: Int, mostPages: Int) {
        (checkpointer.checkpoints.load(ordering: .relaxed), checkpointer.writerCheckpoints.load(ordering: .relaxed),
         checkpointer.mostWALPages.load(ordering: .relaxed))
    }

    /// Committed transactions so far (group commit makes this far fewer than batches).
    public var committedTransactions: Int { transactions.load(ordering: .relaxed) }

    /// Queues the batch for the writer thread, which commits it with whatever else is queued and
    /// completes it there; fails at once (still in order) past `maxPendingRecords` or after `close`.
    public func append(_ records: [StoreRecord], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        let accepted = pending.withLock { state -> Bool in
            if state.closed { return false }
            var failure: StoreError?
            if state.records + records.count > maxPendingRecords {
                failure = .unavailable("the store is \(state.records) records behind (limit \(maxPendingRecords))")
            } else {
                state.records += records.count
            }
            state.items.append(.batch(records, completion, preFailed: failure))
            wakeWriter(&state)
            return true
        }
        if !accepted { completion(.failure(.unavailable("the store is closed"))) }
    }

    /// Commits `records` on the calling thread when the writer thread sleeps with nothing
    /// queued (so every batch appended before has been committed and completed), else nil.
    /// The writer's connection is borrowed under the pending lock: while it is out, appends
    /// queue without waking the writer, and the writer is woken when it is given back if
    /// anything came meanwhile. Costs the caller the commit itself (no fsync under `normal`:
    /// tens of microseconds for a fix); under `full` always nil (`commitsOnCallersThread`).
    public func commitHereIfIdle(_ records: [StoreRecord]) -> Result<Void, StoreError>? {
        guard commitsOnCallersThread else { return nil }
        let borrowed = pending.withLock { state -> Bool in
            guard !state.closed, state.writerWaiting, state.items.isEmpty, !state.committingHere else { return false }
            state.committingHere = true
            return true
        }
        guard borrowed else { return nil }
        let result = commit([records])
        committedHere.add(1, ordering: .relaxed)
        pending.withLock { state in
            state.committingHere = false
            if !state.items.isEmpty || state.closed { wakeWriter(&state) }
        }
        return result
    }

    /// A caller of `commitHereIfIdle` holds the write connection now (tests).
    var isCommittingHere: Bool { pending.withLock { $0.committingHere } }

    /// Batches committed on their caller's thread by `commitHereIfIdle`.
    public var batchesCommittedHere: Int { committedHere.load(ordering: .relaxed) }

    /// Queued like a batch: the writer deletes in transactions of `batch` rows between group
    /// commits, so a large purge does not hold acks back. After `close`: completes with no ids.
    public func purgeEnded(before: Int64, batch: Int, completion: @escaping @Sendable ([String]) -> Void) {
        let accepted = pending.withLock { state -> Bool in
            if state.closed { return false }
            state.items.append(.purge(before: before, batch: max(1, batch), completion: completion))
            wakeWriter(&state)
            return true
        }
        if !accepted { completion([]) }
    }

    /// Runs `body` with the write connection on the writer thread, between transactions, and
    /// waits for it (tests: e.g. `PRAGMA max_page_count`).
    func withWriterConnection(_ body: @escaping @Sendable (SQLiteConnection) -> Void) {
        let done = DispatchSemaphore(value: 0)
        let writer = self.writer
        let work = Work.control { body(writer.db); done.signal() }
        let accepted = pending.withLock { state -> Bool in
            if state.closed { return false }
            state.items.append(work)
            wakeWriter(&state)
            return true
        }
        if accepted { done.wait() }
    }

    /// Holds the writer between transactions until the returned function is called (tests:
    /// batches appended meanwhile all go into the next transaction).
    func pauseWriter() -> @Sendable () -> Void {
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        pending.withLock { state in
            state.items.append(.control {
                entered.signal()
                gate.wait()
            })
            wakeWriter(&state)
        }
        entered.wait()
        return { gate.signal() }
    }

    private func wakeWriter(_ state: inout Pending) {
        if state.writerWaiting && !state.committingHere {
            state.writerWaiting = false
            wake.signal()
        }
    }

    /// Lets the writer finish what is queued, then stops it; later appends fail. Idempotent;
    /// blocks the caller until the writer thread has stopped.
    public func close() {
        let first = closeOnce.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        pending.withLock { state in
            state.closed = true
            wakeWriter(&state)
        }
        writerStopped.wait()
        checkpointer.stop(unhooking: writer.db)
    }

    // MARK: - The writer thread

    private func writerLoop() {
        while true {
            let taken = pending.withLock { state -> [Work]? in
                if state.items.isEmpty {
                    if writer.hasPurgeWork { return [] }
                    if state.closed { return nil }
                    state.writerWaiting = true
                    return []
                }
                let items = state.items
                state.items.removeAll(keepingCapacity: true)
                return items
            }
            guard let items = taken else { break }
            if items.isEmpty && !writer.hasPurgeWork {
                wake.wait()
                continue
            }
            process(items)
            if writer.hasPurgeWork { writer.purgeStep() }
        }
        writer.finishPurge()
        writer.close()
        writerStopped.signal()
    }

    /// One transaction of `batches` through the write connection (the writer thread's, or a
    /// borrower's in `commitHereIfIdle`), counted, and the store's health with it.
    private func commit(_ batches: [[StoreRecord]]) -> Result<Void, StoreError> {
        let result = writer.commit(batches)
        switch result {
        case .success:
            transactions.add(1, ordering: .relaxed)
            healthy.store(true, ordering: .relaxed)
        case .failure:
            healthy.store(false, ordering: .relaxed)
        }
        return result
    }

    /// Writes consecutive batches in one transaction; control items run between transactions.
    private func process(_ items: [Work]) {
        var group: [(records: [StoreRecord], completion: Completion, preFailed: StoreError?)] = []
        func flush() {
            guard !group.isEmpty else { return }
            let live = group.filter { $0.preFailed == nil }.map(\.records)
            let result = live.isEmpty ? .success(()) : commit(live)
            let count = live.reduce(0) { $0 + $1.count }
            pending.withLock { $0.records -= count }
            for entry in group {
                if let failure = entry.preFailed {
                    entry.completion(.failure(failure))
                } else {
                    entry.completion(result)
                }
            }
            group.removeAll()
        }
        for item in items {
            switch item {
            case .batch(let records, let completion, let preFailed):
                group.append((records, completion, preFailed))
            case .control(let body):
                flush()
                body()
            case .purge(let before, let batch, let completion):
                flush()
                writer.startPurge(before: before, batch: batch, completion: completion)
            }
        }
        flush()
    }

    // MARK: - Reads

    private func read<T: Sendable>(_ body: (SQLiteReader) throws(SQLiteError) -> T) throws(StoreError) -> T {
        do {
            return try reader.withLock { (r: inout SQLiteReader) throws(SQLiteError) -> T in try body(r) }
        } catch {
            throw .unavailable("read failed: \(error)")
        }
    }

    /// Every stored device, read on the caller's thread through the read-only connection.
    public func loadDevices() throws(StoreError) -> [StoredDevice] {
        try read { r throws(SQLiteError) in try r.devices() }
    }

    /// Every share link kept, read on the caller's thread through the read-only connection.
    public func loadShares() throws(StoreError) -> [StoredShare] {
        try read { r throws(SQLiteError) in try r.shares() }
    }

    /// Every stored trip (start-up): its last stored state, with the fixes stored after that
    /// state judged again so duplicate and order checks see them.
    /// - Throws: `unusable` when a stored state cannot be decoded.
    public func loadTrips() throws(StoreError) -> [StoredTrip] {
        let rows = try read { r throws(SQLiteError) in try r.tripRows() }
        var result: [StoredTrip] = []
        result.reserveCapacity(rows.count)
        for row in rows {
            let fixes = try read { r throws(SQLiteError) in try r.fixesForLoad(tripKey: row.key) }
            var seqs: [Int64] = []
            var timestamps: [Int64] = []
            var later: [FixInput] = []
            for (id, fix) in fixes {
                if id <= row.fixMark {
                    if let seq = fix.seq { seqs.append(seq) }
                    timestamps.append(fix.ts)
                } else {
                    later.append(fix)
                }
            }
            var trip: Trip
            do {
                trip = try SQLiteTripCodec.decode(state: row.state, route: row.route, seenSeqs: seqs, seenTimestamps: timestamps)
            } catch {
                throw .unusable(path: path, reason: "trip \(row.id): the stored state cannot be read: \(error)")
            }
            // Fixes stored after the trip's last stored state were judged by the hub that stored
            // them: judge them again so duplicates and ordering are checked against them.
            for fix in later { _ = trip.judge(fix) }
            result.append(StoredTrip(trip: trip, createdAt: row.createdAt, riderJSON: row.rider))
        }
        return result
    }

    /// The trip's encoded events with `n > after`, in order, at most `limit` (read-only connection).
    public func events(tripID: String, after: Int, limit: Int) throws(StoreError) -> [[UInt8]] {
        guard limit > 0 else { return [] }
        return try read { r throws(SQLiteError) in try r.events(tripID: tripID, after: after, limit: limit) }
    }

    /// A page of the trail (see `TripStore.trailPage`), read through the read-only connection;
    /// WAL readers do not block the writer.
    public func trailPage(tripID: String, after: TrailCursor?, from: Int64?, to: Int64?, storedUpTo: Int64?, limit: Int) throws(StoreError) -> TrailPage {
        guard limit > 0 else { return TrailPage(fixes: [], next: nil) }
        return try read { r throws(SQLiteError) in
            try r.trailPage(tripID: tripID, after: after, from: from, to: to, storedUpTo: storedUpTo, limit: limit)
        }
    }

    /// The row id of the last fix committed (0: none).
    public func fixMark() throws(StoreError) -> Int64 {
        try read { r throws(SQLiteError) in try r.fixMark() }
    }

    /// The trip's last `count` stored fixes, oldest first (read-only connection).
    public func recentFixes(tripID: String, count: Int) throws(StoreError) -> [StoredFix] {
        guard count > 0 else { return [] }
        return try read { r throws(SQLiteError) in try r.recent(tripID: tripID, count: count) }
    }

    func readWebhookState() throws(StoreError) -> WebhookStoredState {
        try read { r throws(SQLiteError) in try r.webhookState() }
    }

    /// Whether the trip has a stored fix with this seq (or, with seq nil, this ts); an index lookup.
    public func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(StoreError) -> Bool {
        try read { r throws(SQLiteError) in try r.hasFix(tripID: tripID, seq: seq, ts: ts) }
    }
}
