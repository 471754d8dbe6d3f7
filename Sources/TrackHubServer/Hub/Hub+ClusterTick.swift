import TrackHubCore

/// Cluster mode's tick: the shared grid (docs/cluster.md).
///
/// A trip's ticks fall at the first sub-tick after its last command's log time, then every
/// tick period. A node runs a tick at time t only once it has applied every log entry before
/// t (t ≤ watermark), and applies an entry at time T only after the trip's ticks up to T.
/// Every node therefore calls `Trip.tick` and applies commands in the same order at the same
/// times, and sends the same frames (t, seq, position) and events (n, t, bytes).
extension Hub {
    /// Runs every grid tick due up to the node's clock and the watermark, whichever is earlier.
    func tickClusterGrid(now: Int64) {
        guard let cluster else { return }
        let limit = min(now, cluster.watermark)
        for id in cluster.moving {
            advanceTicks(of: id, through: limit)
        }
    }

    /// Runs a trip's due grid ticks up to `limit` (inclusive), in order.
    func advanceTicks(of id: String, through limit: Int64) {
        guard let cluster else { return }
        while let due = trips[id]?.nextTickAt, due <= limit {
            guard let (frame, events, seq, slot, wantsMore) = mutateTrip(id, { entry in
                let (frame, events) = entry.trip.tick(now: due)
                if frame != nil { entry.frameSeq += 1 }
                let wantsMore = entry.trip.wantsTick
                entry.nextTickAt = wantsMore ? due + cluster.periodMs : nil
                return (frame, events, entry.frameSeq, entry.slot, wantsMore)
            }) else { break }
            sendTickResult(trip: id, frame: frame, seq: seq, slot: slot, events: events)
            if !wantsMore { break }
        }
        if trips[id]?.nextTickAt == nil { cluster.moving.remove(id) }
    }

    /// After a command applied at log time `t`: the trip's next tick is the first sub-tick
    /// after it, if the trip has anything to tick.
    func scheduleGridTicks(of id: String, after t: Int64) {
        guard let cluster else { return }
        let next: Int64? = mutateTrip(id) { entry in
            entry.nextTickAt = entry.trip.wantsTick ? cluster.firstTick(after: t) : nil
            return entry.nextTickAt
        } ?? nil
        if next != nil { cluster.moving.insert(id) } else { cluster.moving.remove(id) }
    }
}
