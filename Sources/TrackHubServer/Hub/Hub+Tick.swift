import TrackHubCore
import TrackHubLWS

/// The tick (PROTOCOL 6.3): every moving trip's frame, encoded once, queued to each of its
/// frame-mode subscribers. Idle trips are not looked at.
extension Hub {
    func tick() {
        let started = systemMonotonicMicros()
        let now = clock.wallMillis()
        commands.advanceTrips(now: now)
        let elapsed = Double(systemMonotonicMicros() - started) / 1_000_000
        metrics.ticks += 1
        metrics.tickSecondsSum += elapsed
        metrics.tickSecondsLast = elapsed
        metrics.tickSecondsMax = max(metrics.tickSecondsMax, elapsed)

        fleetTickIfDue(now: now)  // checked every wake-up: a tick starts on time, not up to 0.5 s late
        if now - lastStateFlush >= 100 {
            lastStateFlush = now
            flushChangedTripStates()
        }
        if now - lastHousekeeping >= min(500, config.pingIntervalMs / 2) {
            let previousHousekeeping = lastHousekeeping  // for the once-a-minute retention check
            lastHousekeeping = now
            fanout.closeSlowReaders(now: now)
            fanout.sweepKeepalive(now: now)
            sweepTokens(now: now)
            commands.housekeeping(now: now)  // arrived trips end; the cluster's requests and snapshots
            purgeExpiredTripsIfDue(now: now, previous: previousHousekeeping)  // --retain-days (Hub+Retention)
            shares.forgetExpiredSharesIfDue(now: now)  // share links past their expiry (ShareService)
            refusals.sweep(now: now)  // --max-refusal-rate's buckets that have refilled
            routeSearchClients.sweepClosedPeers(host)  // searches whose clients left are dropped unrun
        }
    }

    /// One sub-tick of a hub on its own: the trips of the phase due now. The rest of the
    /// previous sub-tick, if it stepped aside for input, is finished first, in one go: the
    /// phases keep their order and at most one sub-tick's trips ever wait (`SubTickRest`).
    func tickDueTrips(now: Int64) {
        if subTickRest != nil { continueSubTick(now: now, yielding: false) }
        let phase = trips.animating.current
        let due = trips.animating.takeDue()
        guard !due.isEmpty else { return }
        subTickRest = SubTickRest(phase: phase, trips: Array(due))
        continueSubTick(now: now, yielding: true, checkFirst: true)
    }

    /// The loop came back after reading what waited: the rest of the sub-tick, at the time now.
    func resumeSubTick() {
        guard subTickRest != nil else { return }
        continueSubTick(now: clock.wallMillis(), yielding: true)
    }

    /// Ticks the sub-tick's trips still to do. Fixes ahead of frames: with `yielding`, every
    /// `SubTickRest.deliveriesPerSlice` deliveries (and before the first one, with
    /// `checkFirst`) it asks whether input waits (a peer's bytes unread, or store commits in
    /// the inbox: fixes to apply and ack); if so it stops, wakes the loop and returns, so lws
    /// reads the courier's fix (judged and handed to the store at once) and the commits are
    /// applied and acked before the remaining writes. The loop's wake-up resumes it
    /// (`serviceWoke`). A resumed slice always ticks at least one trip before asking again.
    /// Each trip's frame still goes to all its subscribers at once, and every connection's
    /// queue is untouched, so order and latest-wins are as they were.
    func continueSubTick(now: Int64, yielding: Bool, checkFirst: Bool = false) {
        guard var rest = subTickRest else { return }
        subTickRest = nil
        var stopped: [String] = []
        var sinceCheck = checkFirst ? SubTickRest.deliveriesPerSlice : 0
        while rest.next < rest.trips.count {
            if yielding, sinceCheck >= SubTickRest.deliveriesPerSlice {
                sinceCheck = 0
                if inbox.hasWork || host.hasInputWaiting {
                    subTickRest = rest
                    metrics.tickYields += 1
                    host.wake()
                    break
                }
            }
            let id = rest.trips[rest.next]
            rest.next += 1
            // Removed, or moved to another phase, while the loop read input: not this sub-tick's.
            guard trips.animating.phase(of: id) == rest.phase else { continue }
            let deliveredBefore = metrics.framesOut
            guard let (frame, events, seq, slot, wantsTick) = trips.mutate(id, { entry in
                let (frame, events) = entry.trip.tick(now: now)
                if frame != nil { entry.frameSeq += 1 }
                return (frame, events, entry.frameSeq, entry.slot, entry.trip.wantsTick)
            }) else {
                stopped.append(id)
                continue
            }
            sendTickResult(trip: id, frame: frame, seq: seq, slot: slot, events: events, now: now)
            sinceCheck += 1 + metrics.framesOut - deliveredBefore
            if frame == nil {
                if wantsTick {
                    // An animation that started this very millisecond (a fix committed just
                    // before this sub-tick) has not moved the marker yet: look again at the
                    // next sub-tick, not a whole tick later. (No frame went out now, so the
                    // next one is still a tick or more after the last.)
                    trips.animating.scheduleSoon(id)
                } else {
                    stopped.append(id)
                }
            }
        }
        for id in stopped { trips.animating.remove(id) }
    }

    /// A tick's frame to the trip's frame-mode subscribers (encoded once), then its events.
    func sendTickResult(trip id: String, frame: TripFrame?, seq: Int, slot: Int, events: [TripEvent], now: Int64) {
        if let frame, let followers = fanout.subscriptions.followers(of: id), followers.values.contains(.frames) {
            let message = OutboundMessage.frame(trip: id, seq: seq, frame, slot: slot)
            metrics.framesEncoded += 1
            metrics.framesOut += fanout.broadcast(message, to: followers, mode: .frames)
        }
        // The last frame of an arrived trip (at the destination) ends its share subscriptions.
        if let frame, frame.status == .arrived { shares.endCustomerSubscriptionsIfOver(trip: id, now: now) }
        if !events.isEmpty {
            sendArrivalSegmentIfArrived(events, trip: id, now: now)
            storeStateAndSend(events, trip: id)
        }
    }

    /// PROTOCOL 6.7: on `arrived` the marker goes on to the destination; segment subscribers
    /// get that move as a segment (one point at the destination when it is there already), so
    /// their last segment too ends at the destination with progress 1.
    func sendArrivalSegmentIfArrived(_ events: [TripEvent], trip id: String, now: Int64) {
        guard events.contains(where: { $0.kind == .arrived }) else { return }
        guard let (segment, seq, slot) = trips.mutate(id, { entry -> (TripSegment, Int, Int)? in
            guard let segment = entry.trip.currentSegment(at: now) else { return nil }
            entry.segmentSeq += 1
            entry.lastSegment = segment
            return (segment, entry.segmentSeq, entry.slot)
        }) ?? nil else { return }
        metrics.segmentsOut += fanout.broadcast(OutboundMessage.segment(trip: id, seq: seq, segment, slot: slot), trip: id, mode: .segments)
    }
}
