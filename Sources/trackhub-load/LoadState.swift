import TrackHubLWS

/// The latency marks of one trip: "a frame (or segment) with seq ≥ `threshold` is the first
/// that shows the fix sent at `sentAt`". Append-only; the last `capacity` are kept.
struct MarkLog {
    static let capacity = 64
    private var thresholds = [Int64](repeating: 0, count: capacity)
    private var sentAt = [Int64](repeating: 0, count: capacity)
    private(set) var count = 0

    mutating func append(threshold: Int64, sentAt time: Int64) {
        thresholds[count % Self.capacity] = threshold
        sentAt[count % Self.capacity] = time
        count += 1
    }

    /// Mark `index` (absolute), nil once it has been overwritten.
    func mark(_ index: Int) -> (threshold: Int64, sentAt: Int64)? {
        guard index < count, index >= count - Self.capacity else { return nil }
        return (thresholds[index % Self.capacity], sentAt[index % Self.capacity])
    }
}

/// The last frames (or segments) a viewer received: seq and receive time.
struct RecentFrames {
    static let capacity = 32
    private var seqs = [Int64](repeating: 0, count: capacity)
    private var times = [Int64](repeating: 0, count: capacity)
    private(set) var count = 0

    enum Lookup { case found(Int64), notYet, lost }

    mutating func push(seq: Int64, at time: Int64) {
        seqs[count % Self.capacity] = seq
        times[count % Self.capacity] = time
        count += 1
    }

    mutating func reset() { count = 0 }

    /// The receive time of the first kept entry with seq ≥ `threshold`.
    func firstAtLeast(_ threshold: Int64) -> Lookup {
        guard count > 0 else { return .notYet }
        let newest = (count - 1) % Self.capacity
        if seqs[newest] < threshold { return .notYet }
        let oldest = max(0, count - Self.capacity)
        if oldest > 0 && seqs[oldest % Self.capacity] > threshold { return .lost }
        for i in oldest..<count where seqs[i % Self.capacity] >= threshold {
            return .found(times[i % Self.capacity])
        }
        return .notYet
    }
}

/// A courier and its trip (Nchan: a publisher and its channel).
struct TripLoad {
    let id: String
    let route: Int
    let startM: Double
    /// `--stop-link-share`: where its stops lie along the route (metres; empty without), and
    /// the share token of each stop's link once created (PROTOCOL 17).
    var stopAlongs: [Double] = []
    var stopTokens: [String?] = []
    /// How many of its viewers follow a stop link (the next one takes the next stop).
    var stopLinkViewers = 0
    var created = true
    var connection: ConnectionID?
    var isOpen = false
    var nextSeq: Int64 = 1
    var nextDue: Int64 = 0
    /// Send time of fix `seq`, at `seq % ring`.
    var sentSeq = [Int64](repeating: 0, count: 128)
    var sentAt = [Int64](repeating: 0, count: 128)
    var unacked = 0
    /// Applied, acked fixes waiting for the next frame on the courier's own subscription.
    var awaitingFrame: [Int64] = []
    var frameMarks = MarkLog()
    var segmentMarks = MarkLog()
    var applied: Int64 = 0
    var viewers: [Int32] = []
    var endedSeen = false
    var lastTs: Int64 = 0
    /// The interval the hub's last `cadence` asked for, µs (PROTOCOL 18); 0: none, `--fix-interval`.
    var askedMicros: Int64 = 0
    /// When the courier last sent a fix (µs), and how far along its route it has driven, s.
    var lastSentAt: Int64 = 0
    var drivenS: Double = 0
}

/// A trip viewer: one connection subscribed to one trip.
struct ViewerLoad {
    let trip: Int32
    let segments: Bool
    /// `--stop-link-share`: the stop (index into its trip's stops) whose link it follows; -1
    /// for a viewer of the whole trip.
    var stopLink = -1
    /// A stop-link viewer: whether the hub's last `stop` message said the courier is shown.
    var shown = false
    var connection: ConnectionID?
    var isOpen = false
    /// First frame/segment seq of the current subscription (-1: none yet).
    var firstSeq: Int64 = -1
    var recent = RecentFrames()
    var nextMark = 0
    var endedSeen = false
}

/// A fleet viewer: a viewport at one zoom, panning along a route.
struct FleetViewerLoad {
    let zoom: Int
    var connection: ConnectionID?
    var isOpen = false
    var step = 0
    var nextPan: Int64 = 0
    var requestID: Int64 = 0
    var requestAt: Int64 = 0
}

/// Who a connection belongs to.
enum Owner {
    case none
    case courier(Int32)
    case viewer(Int32)
    case fleet(Int32)
    case idle(Int32)
}
