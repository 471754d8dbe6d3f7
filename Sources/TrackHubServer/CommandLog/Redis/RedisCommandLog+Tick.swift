import TrackHubCore

/// Cluster mode's tick: the shared grid (docs/cluster.md).
///
/// A trip's ticks fall at the first sub-tick after its last command's log time, then every
/// tick period. A node runs a tick at time t only once it has applied every log entry before
/// t (t ≤ watermark), and applies an entry at time T only after the trip's ticks up to T.
/// Every node therefore calls `Trip.tick` and applies commands in the same order at the same
/// times, and sends the same frames (t, seq, position) and events (n, t, bytes).
extension RedisCommandLog {
    /// Runs every grid tick due up to the node's clock and the watermark, whichever is earlier.
    /// A trip waits in the phase of its next tick's time, so each sub-tick of log time looks
    /// only at its own phase; a gap of a whole tick or more (start-up, a stalled log) looks at
    /// every phase once, each trip running all its due ticks.
    func tickGrid(now: Int64) {
        let limit = min(now, state.readTime)
        guard limit != .min else { return }
        let lastDue = limit / state.subTickMs * state.subTickMs
        let earliest = lastDue - Int64(state.schedule.phases - 1) * state.subTickMs
        var next = state.lastGridTick == .min ? earliest : max(earliest, state.lastGridTick + state.subTickMs)
        while next <= lastDue {
            for id in state.schedule.members(ofPhase: state.phase(at: next)) {
                // Each trip only up to its own partition's watermark (a partition replaying
                // after its snapshot holds back only its own trips).
                advanceTicks(of: id, through: min(limit, state.parts[state.partition(of: id)].watermark))
            }
            next += state.subTickMs
        }
        state.lastGridTick = max(state.lastGridTick, lastDue)
    }

    /// Runs the trip's grid ticks due up to now, as far as its partition's log has been read
    /// (the limit `tickGrid` would reach): the grid visits a trip only in its own phase, so a
    /// trip just installed or replayed may owe ticks (and the events they send) for up to a
    /// tick period. A request about it (`usingTrip`) runs them first, and shows the present.
    func catchUpTicks(of trip: String) {
        let p = state.partition(of: trip)
        guard state.parts[p].phase == .applied, services.trips[trip] != nil else { return }
        let limit = min(services.clock.wallMillis(), state.readTime, state.parts[p].watermark)
        guard limit != .min else { return }
        advanceTicks(of: trip, through: limit)
    }

    /// Runs a trip's due grid ticks up to `limit` (inclusive), in order.
    func advanceTicks(of id: String, through limit: Int64) {
        while let due = services.trips[id]?.nextTickAt, due <= limit {
            guard let (frame, events, seq, slot, wantsMore) = services.trips.mutate(id, { entry in
                let (frame, events) = entry.trip.tick(now: due)
                if frame != nil { entry.frameSeq += 1 }
                let wantsMore = entry.trip.wantsTick
                entry.nextTickAt = wantsMore ? due + state.periodMs : nil
                return (frame, events, entry.frameSeq, entry.slot, wantsMore)
            }) else { break }
            services.publisher.sendTickResult(trip: id, frame: frame, seq: seq, slot: slot, events: events, now: due)
            if !wantsMore { break }
        }
        // The phase of its next tick (the same one unless the tick period is not a whole
        // number of sub-ticks).
        if let next = services.trips[id]?.nextTickAt { state.schedule.insert(id, phase: state.phase(at: next)) } else { state.schedule.remove(id) }
    }

    /// After a command applied at log time `t`: a trip that was ticking keeps its grid (its
    /// ticks up to `t` have run, so its next one is after `t`): PROTOCOL 6.3 is one frame per
    /// trip per tick, and a restarted grid would send a second frame a sub-tick after the last.
    /// Otherwise its next tick is the first sub-tick after `t`, if it has anything to tick.
    /// Every node has the same `nextTickAt` (it is in the snapshot), so every node decides alike.
    func scheduleGridTicks(of id: String, after t: Int64) {
        let next: Int64? = services.trips.mutate(id) { entry in
            if !entry.trip.wantsTick {
                entry.nextTickAt = nil
            } else if entry.nextTickAt.map({ $0 <= t }) ?? true {
                entry.nextTickAt = state.firstTick(after: t)
            }
            return entry.nextTickAt
        } ?? nil
        if let next { state.schedule.insert(id, phase: state.phase(at: next)) } else { state.schedule.remove(id) }
    }
}
