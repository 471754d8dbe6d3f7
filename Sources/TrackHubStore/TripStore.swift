import TrackHubCore

/// One thing the hub asks the store to keep. A batch of records is committed whole or not at all.
public enum StoreRecord: Sendable {
    /// A trip's whole state machine; the latest one per trip in a batch is what is kept.
    case tripState(Trip, createdAt: Int64, riderJSON: [UInt8]?)
    /// A fix as received, with the reason it was not applied (nil when applied).
    case fix(tripID: String, fix: FixInput, refusal: FixRefusal?, receivedAt: Int64)
    /// A trip event, with its wire encoding exactly as first sent (replays send these bytes).
    case event(tripID: String, n: Int, encoded: [UInt8])
}

/// A stored fix, for the trail and snapshots.
public struct StoredFix: Sendable, Equatable {
    public var fix: FixInput
    public var refusal: FixRefusal?
    public init(fix: FixInput, refusal: FixRefusal?) {
        self.fix = fix
        self.refusal = refusal
    }
}

/// A trip as loaded at start-up.
public struct StoredTrip: Sendable {
    public var trip: Trip
    public var createdAt: Int64
    /// The rider object as given at creation (JSON), or nil.
    public var riderJSON: [UInt8]?
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
    /// Every trip that has not ended, plus ended ones still retained, for start-up.
    func loadTrips() throws(StoreError) -> [StoredTrip]
    /// Encoded events of a trip with `n > after`, in order, at most `limit`.
    func events(tripID: String, after: Int, limit: Int) throws(StoreError) -> [[UInt8]]
    /// Stored fixes of a trip ordered by (ts, seq), `ts` within `from...to`, at most `limit`.
    func trail(tripID: String, from: Int64?, to: Int64?, limit: Int) throws(StoreError) -> [StoredFix]
    /// The last `count` stored fixes of a trip, oldest first (for snapshots).
    func recentFixes(tripID: String, count: Int) throws(StoreError) -> [StoredFix]
    /// Whether a fix with this seq (or, without seq, this ts) is stored for the trip.
    func hasFix(tripID: String, seq: Int64?, ts: Int64) throws(StoreError) -> Bool
    /// True while the store can commit.
    var isHealthy: Bool { get }
    /// Waits for pending batches and releases resources.
    func close()
}
