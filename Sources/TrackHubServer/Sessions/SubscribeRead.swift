import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// A `subscribe` whose answer waits for the store (its trail, its replayed events): what was
/// decided when it came, so the answer is of that moment, and the place held for it in the
/// connection's queue (`SendQueue.reserveSnapshot`). Everything here is a value, so it can
/// go to the store-read queue and back.
struct SubscribeRead: Sendable {
    /// The snapshot as of the subscribe, its trail still to be read (empty for a customer).
    var view: TripView
    let re: MessageID?
    /// `since_event`'s answer: nil without one.
    let recovered: Bool?
    /// Replay the events after this one (only with `recovered: true`).
    let replayAfter: Int?
    /// How many events to replay: those already sent live (later ones are queued as live
    /// messages behind the reservation).
    let replayCount: Int
    /// The rest of the running animation, for a `segments` subscriber (nil: none).
    let segment: OutboundMessage?
    /// The reservation its answer fills.
    let ticket: UInt64

    /// Whether the store must be read at all.
    var needsStore: Bool { view.audience != .customer || replayCount > 0 }
}

/// What one connection has in flight for a trip: the subscribe being read and, when the
/// client subscribed again meanwhile, only the latest one (read when the first returns: at
/// most one read per connection and trip, so a client pipelining subscribes costs one read
/// at a time, and `--max-subscriptions` reads at most).
struct SubscribeReads {
    var reading: SubscribeRead
    var next: SubscribeRead?
}

/// What the store gave for a subscribe.
struct SubscribeReadResult: Sendable {
    var trail: [FixInput]
    var replay: [[UInt8]]
}
