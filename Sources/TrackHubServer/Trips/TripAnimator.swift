import TrackHubCore
import TrackHubLWS

/// Ticks the moving trips of a hub on its own (PROTOCOL 6.3): each sub-tick, the trips of
/// the phase due now, one frame each (TripPublisher sends it). Idle trips are not looked at.
/// A sub-tick with many deliveries steps aside for input (`SubTickRest`), so fixes are read
/// and acked ahead of frames; at most one sub-tick's trips ever wait.
///
/// Threads: the service thread only.
final class TripAnimator {
    private let trips: TripTable
    private let publisher: TripPublisher
    private let metrics: HubMetrics
    private let inbox: ServiceThreadInbox
    private let host: any ServerHost
    private let clock: HubClock
    /// One tick, ms (`--tick-hz`).
    private let tickMs: Int64
    /// The trips of the current sub-tick still to be ticked after the loop went back to read
    /// input first; nil when none wait.
    private var rest: SubTickRest?

    init(trips: TripTable, publisher: TripPublisher, metrics: HubMetrics, inbox: ServiceThreadInbox, host: any ServerHost, clock: HubClock, tickHz: Int) {
        self.trips = trips
        self.publisher = publisher
        self.metrics = metrics
        self.inbox = inbox
        self.host = host
        self.clock = clock
        tickMs = Int64(1000 / max(1, tickHz))
    }

    /// One sub-tick: the trips of the phase due now. The rest of the previous sub-tick, if it
    /// stepped aside for input, is finished first, in one go: the phases keep their order.
    func tickDueTrips(now: Int64) {
        if rest != nil { continueSubTick(now: now, yielding: false) }
        trips.animating.wakeDozers(now: now)
        let phase = trips.animating.current
        let due = trips.animating.takeDue()
        guard !due.isEmpty else { return }
        rest = SubTickRest(phase: phase, trips: Array(due))
        continueSubTick(now: now, yielding: true, checkFirst: true)
    }

    /// The loop came back after reading what waited: the rest of the sub-tick, at the time now.
    func resumeSubTick() {
        guard rest != nil else { return }
        continueSubTick(now: clock.wallMillis(), yielding: true)
    }

    /// Ticks the sub-tick's trips still to do. Fixes ahead of frames: with `yielding`, every
    /// `SubTickRest.deliveriesPerSlice` deliveries (and before the first one, with
    /// `checkFirst`) it asks whether input waits (a peer's bytes unread, or store commits in
    /// the inbox: fixes to apply and ack); if so it stops, wakes the loop and returns, so lws
    /// reads the courier's fix (judged and handed to the store at once) and the commits are
    /// applied and acked before the remaining writes. The loop's wake-up resumes it
    /// (`Hub.serviceWoke`). A resumed slice always ticks at least one trip before asking
    /// again. Each trip's frame still goes to all its subscribers at once, and every
    /// connection's queue is untouched, so order and latest-wins are as they were.
    private func continueSubTick(now: Int64, yielding: Bool, checkFirst: Bool = false) {
        guard var rest else { return }
        self.rest = nil
        var stopped: [String] = []
        var sinceCheck = checkFirst ? SubTickRest.deliveriesPerSlice : 0
        while rest.next < rest.trips.count {
            if yielding, sinceCheck >= SubTickRest.deliveriesPerSlice {
                sinceCheck = 0
                if inbox.hasWork || host.hasInputWaiting {
                    self.rest = rest
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
            // A trip whose followers all take segments has no frame built (Trip.tickUnframed):
            // the same marker and events, numbered alike, without a frame's numbers.
            let takers = publisher.frameTakers(of: id)
            guard let (frame, framedStatus, events, seq, slot, wantsTick, quietUntil) = trips.mutate(id, { entry in
                let frame: TripFrame?, framedStatus: TripStatus?, events: [TripEvent]
                if takers.wantFrames {
                    (frame, events) = entry.trip.tick(now: now)
                    framedStatus = frame?.status
                } else {
                    frame = nil
                    (framedStatus, events) = entry.trip.tickUnframed(now: now)
                }
                if framedStatus != nil { entry.frameSeq += 1 }
                let quietUntil = takers.wantFrames || !events.isEmpty ? nil : entry.trip.firstPossibleEventTime
                return (frame, framedStatus, events, entry.frameSeq, entry.slot, entry.trip.wantsTick, quietUntil)
            }) else {
                stopped.append(id)
                continue
            }
            publisher.sendTickResult(
                trip: id, frame: frame, framedStatus: framedStatus, takers: takers, seq: seq, slot: slot, events: events, now: now)
            sinceCheck += 1 + metrics.framesOut - deliveredBefore
            if wantsTick, let quietUntil, quietUntil - tickMs > now + tickMs {
                // Nobody takes its frames and no tick before then can find an event: it skips
                // those ticks and wakes a tick early, so its ticks from then on find each event
                // as the skipped ones would have. Its frames of meanwhile are not counted
                // (PROTOCOL 6.3 numbers the frames a hub sends; a hub alone sent none of them).
                trips.animating.doze(id, until: quietUntil - tickMs)
            } else if framedStatus == nil {
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
}
