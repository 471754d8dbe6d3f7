import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// A trip the hub holds, with what the fan-out needs next to the state machine.
struct TripEntry {
    var trip: Trip
    let createdAt: Int64
    /// A small integer naming this trip in per-connection queues (latest-wins key).
    let slot: Int
    /// Per process, from 1 (PROTOCOL 4: frames and segments are numbered separately).
    var frameSeq = 0
    var segmentSeq = 0
    /// The segment of the running animation, for subscribers that join mid-animation.
    var lastSegment: TripSegment?
    /// The rider object as given at creation (echoed verbatim), or nil.
    var riderJSON: [UInt8]?
    /// When the trip ended (for retention), nil while it runs.
    var endedAt: Int64?
    /// Cluster mode: the grid time of this trip's next tick; nil while it needs none.
    var nextTickAt: Int64?
    /// Cluster mode: the trip's last events as sent (for snapshots, so a node that starts from
    /// one can replay them with since_event). At most `recentEventsKept`.
    var recentEvents: [[UInt8]] = []
    static let recentEventsKept = 256
    /// PROTOCOL 16: a search for a new route of this trip is on the router's queue (one at a time).
    var rerouteSearching = false
    /// When this trip's last search failed (hub ms), for the 10 s between retries.
    var rerouteFailedAt: Int64?
    /// TripTable's own: whether the trip is in its set of arrived trips.
    var listedArrived = false
}

extension TripView {
    /// The view of a trip the hub holds (nil: unknown) with its stored trail, at `now` (ms).
    init(
        id: String, entry: TripEntry?, trail: [StoredFix], now: Int64, includeRoute: Bool = true, includeTrail: Bool = true,
        audience: Audience = .full
    ) {
        self.init(
            id: id, trip: entry?.trip, riderJSON: entry?.riderJSON, trail: trail.map(\.fix), now: now,
            includeRoute: includeRoute, includeTrail: includeTrail)
        self.audience = audience
    }
}
