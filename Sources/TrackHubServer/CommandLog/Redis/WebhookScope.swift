import TrackHubSync

/// Cluster mode: whose webhooks this node delivers (PROTOCOL 12 and 15: "the owner of the
/// event's partition delivers it"). The service thread sets the partitions this node owns
/// and has applied (`RedisCommandLog.updateWebhookScope`); the dispatcher thread reads them
/// and, when they change, starts its queues again from the positions in Redis, for the
/// trips of those partitions only.
///
/// Around a hand-over two nodes may both deliver a trip's events for a moment (the old owner
/// notices the loss within a lease round); receivers drop repeats by `webhook-id`.
final class WebhookScope: Sendable {
    struct Current: Sendable, Equatable {
        var generation = 0
        var partitions: Set<Int> = []
    }

    let partitionCount: Int
    private let current = HubMutex(Current())

    init(partitions: Int) {
        partitionCount = partitions
    }

    /// Sets the partitions delivered (the service thread); a change bumps the generation.
    func set(_ partitions: Set<Int>) {
        current.withLock { c in
            if c.partitions != partitions {
                c.partitions = partitions
                c.generation += 1
            }
        }
    }

    func read() -> Current { current.withLock { $0 } }

    /// Whether a trip's events are delivered here under `scope`.
    func delivers(_ trip: String, in scope: Current) -> Bool {
        scope.partitions.contains(ClusterLog.partition(of: trip, partitions: partitionCount))
    }
}
