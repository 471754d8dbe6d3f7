/// The timing of partition leases, derived from `--cluster-lease` (PROTOCOL 15: a dead hub's
/// partitions are taken over within the lease, measured from its death).
///
/// A lease key can lapse only a whole key lifetime after its owner's last renewal, and the
/// owner may have renewed it just before it died; then another hub must notice the lapse in its
/// next round, and may need one more round when two hubs picked the same partition. So the
/// key lives for half the lease and rounds come every tenth of it (±20 % jitter): the worst
/// case is about 0.5 + 0.12 + 0.12 of the lease (2.2 s of a 3 s lease), where a key living
/// the whole lease, renewed every fifth, took 1.2-1.8 leases (issue 39: 5.1-5.4 s of 3 s).
///
/// Fencing: a node acts as a partition's owner only until `fenceMs` after the start of the
/// round that last renewed it, which is before the key can lapse (the renewal ran in Redis
/// after that start) by `marginMs`, so two hubs never act as its owner at once, even when a
/// round stalls and no report comes.
struct LeasePacing: Equatable, Sendable {
    /// `--cluster-lease`.
    let leaseMs: Int64

    /// The lease keys' `PX`, and how long a hub's announcement in `trackhub:hubs` lasts.
    var keyTTLMs: Int64 { max(200, leaseMs / 2) }
    /// The pause between two rounds, before jitter.
    var roundMs: Int64 { max(50, leaseMs / 10) }
    /// How far before its key can lapse a node stops acting as the owner: room for the
    /// service thread to act on the deadline, and for clock rates (Redis's and this node's).
    var marginMs: Int64 { keyTTLMs / 4 }
    /// How long after a round's start its renewals and takes may be acted on.
    var fenceMs: Int64 { keyTTLMs - marginMs }
    /// The lease connection's timeout: a stalled call fails the round well before the fence.
    var timeoutMs: Int { Int(min(keyTTLMs / 2, 2000)) }
}
