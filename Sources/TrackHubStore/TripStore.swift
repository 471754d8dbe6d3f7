import TrackHubCore

/// One thing the hub asks the store to keep. A batch of records is committed whole or not at all.
public enum StoreRecord: Sendable {
    /// A trip's whole state machine; the latest one per trip in a batch is what is kept.
    case tripState(Trip, createdAt: Int64, riderJSON: [UInt8]?)
    /// A fix as received, with the reason it was not applied (nil when applied).
    case fix(tripID: String, fix: FixInput, refusal: FixRefusal?, receivedAt: Int64)
    /// A trip event, with its wire encoding exactly as first sent (replays send these bytes).
    case event(tripID: String, n: Int, encoded: [UInt8])
    /// A device as it is now (created or changed); the latest one per id is what is kept.
    case device(StoredDevice)
    /// Forgets a device.
    case deleteDevice(id: String)
    /// A share link as it is now (issued, or revoked); the latest one per `jti` is kept.
    case share(StoredShare)
    /// Forgets the share links whose tokens expired before this time (ms since the epoch).
    case forgetShares(expiredBefore: Int64)
    /// Where webhook delivery stands (PROTOCOL 12).
    case webhook(WebhookRecord)
}

/// A stored fix, for the trail and snapshots.
public struct StoredFix: Sendable, Equatable {
    /// The fix as received from the courier.
    public var fix: FixInput
    /// Why the trip did not apply it; nil: applied.
    public var refusal: FixRefusal?
    /// A fix read back from the store.
    public init(fix: FixInput, refusal: FixRefusal?) {
        self.fix = fix
        self.refusal = refusal
    }
}

/// Where a paged trail read stands: the sort key of the last fix handed out. Fixes sort by
/// (`ts`, `seq`, `n`), a fix without seq before those with one at the same `ts`.
public struct TrailCursor: Sendable, Equatable {
    /// The last fix's `ts`, ms since the epoch.
    public var ts: Int64
    /// The last fix's `seq`; nil: it had none.
    public var seq: Int64?
    /// The store's number for the fix, growing with every fix stored (SQLite: its row id);
    /// it orders fixes with equal (`ts`, `seq`) and bounds a read with `storedUpTo`.
    public var n: Int64
    /// The cursor after a fix with this sort key.
    public init(ts: Int64, seq: Int64?, n: Int64) {
        self.ts = ts
        self.seq = seq
        self.n = n
    }
}

/// One page of a trail: its fixes, and where the next page starts (nil: this was the last).
public struct TrailPage: Sendable {
    /// The page's fixes, in trail order, at most the read's `limit`.
    public var fixes: [StoredFix]
    /// Pass this as `after` to read the next page; nil: no more.
    public var next: TrailCursor?
    /// A page; `next` nil ends the trail.
    public init(fixes: [StoredFix], next: TrailCursor?) {
        self.fixes = fixes
        self.next = next
    }
}

/// A trip as loaded at start-up.
public struct StoredTrip: Sendable {
    /// The trip's state machine as last stored.
    public var trip: Trip
    /// When the trip was created, ms since the epoch.
    public var createdAt: Int64
    /// The rider object as given at creation (JSON), or nil.
    public var riderJSON: [UInt8]?
    /// A trip as read back from the store.
    public init(trip: Trip, createdAt: Int64, riderJSON: [UInt8]?) {
        self.trip = trip
        self.createdAt = createdAt
        self.riderJSON = riderJSON
    }
}

/// Why the store could not do what it was asked.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The store cannot commit now (disk full, I/O error, connection lost); nothing was stored.
    case unavailable(String)
    /// The store's files cannot be opened or are not a TrackHub store.
    case unusable(path: String, reason: String)

    /// One line for logs and error answers: the reason, with the path for `unusable`.
    public var description: String {
        switch self {
        case .unavailable(let why): return "store unavailable: \(why)"
        case .unusable(let path, let why): return "\(path): \(why)"
        }
    }
}

/// Where the hub keeps trips, fixes and events (PROTOCOL section 7).
///
/// Guarantees every implementation gives:
/// - `append` completes batches in the order they were submitted, each whole or not at all;
///   its completion runs on a thread of the store's choosing once the batch is durable
///   (or has failed). The hub acks only after that completion.
/// - Reads see every batch whose completion has run.
public protocol TripStore: AnyObject, Sendable {
    /// Submits a batch; `completion` gets `.success` once it is durable.
    func append(_ records: [StoreRecord], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void)
    /// Commits the batch on the calling thread, now, when nothing else is queued or being
    /// written, and returns how that went; nil when the store cannot (its own thread is at
    /// work, or it has no such path): the caller then uses `append`. A batch committed here
    /// is ordered after every batch appended before it, like `append`'s.
    func commitHereIfIdle(_ records: [StoreRecord]) -> Result<Void, StoreError>?
    /// Every trip that has not ended, plus ended ones still retained, for start-up.
    func loadTrips() throws(StoreError) -> [StoredTrip]
    /// Every registered device, for start-up.
    func loadDevices() throws(StoreError) -> [StoredDevice]
    /// Every share link kept (issued or revoked, not yet forgotten), for start-up.
    func loadShares() throws(StoreError) -> [StoredShare]
    /// Encoded events of a trip with `n > after`, in order, at most `limit`.
    func events(tripID: String, after: Int, limit: Int) throws(StoreError) -> [[UInt8]]
    /// Stored fixes of a trip ordered by (ts, seq), `ts` within `from...to`, that sort after
    /// `after` and were stored no later than `storedUpTo` (a `fixMark()`), at most `limit`.
    /// Reading page after page from one mark gives the same fixes however often it is repeated.
    func trailPage(tripID: String, after: TrailCursor?, from: Int64?, to: Int64?, storedUpTo: Int64?, limit: Int) throws(StoreError) -> TrailPage
    /// The number of the last fix stored so far (0: none), for `trailPage(storedUpTo:)`.
    func fixMark() throws(StoreError) -> Int64
    /// The last `count` stored fixes of a trip, oldest first (for snapshots).
    func recentFixes(tripID: String, count: Int) throws(StoreError) -> [StoredFix]
    /// Whether a fix with this seq (or, without seq, this ts) is stored for the trip.
    func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(StoreError) -> Bool
    /// True while the store can commit.
    var isHealthy: Bool { get }
    /// Waits for pending batches and releases resources.
    func close()
}

extension TripStore {
    /// Stores without a path on the caller's thread: always through `append`.
    public func commitHereIfIdle(_ records: [StoreRecord]) -> Result<Void, StoreError>? { nil }

    /// Which of these seqs, and (for fixes without seq) which of these timestamps, the trip
    /// has stored: the duplicate check past what the hub remembers (PROTOCOL 7).
    public func storedFixKeys(tripID: String, seqs: [Int64], timestamps: [Int64]) throws(StoreError) -> (seqs: Set<Int64>, timestamps: Set<Int64>) {
        var foundSeqs = Set<Int64>()
        var foundTimestamps = Set<Int64>()
        for seq in seqs where try hasFix(tripID: tripID, seq: seq, ts: 0) { foundSeqs.insert(seq) }
        for ts in timestamps where try hasFix(tripID: tripID, seq: nil, ts: ts) { foundTimestamps.insert(ts) }
        return (foundSeqs, foundTimestamps)
    }

    /// Stored fixes of a trip ordered by (ts, seq), `ts` within `from...to`, at most `limit`.
    public func trail(tripID: String, from: Int64?, to: Int64?, limit: Int) throws(StoreError) -> [StoredFix] {
        try trailPage(tripID: tripID, after: nil, from: from, to: to, storedUpTo: nil, limit: limit).fixes
    }
}
