/// Ticks (PROTOCOL 6.3): frames while the marker moves, and the events the marker's position
/// triggers (6.6 waypoints, 6.7 arrival).
extension Trip {
    /// Called on every tick: nil when the marker did not move since the last tick (except the
    /// one frame that shows the arrived trip at its destination). The frame that ends an
    /// animation is exactly at its target; the first frame after a jump carries `jump`. Events a
    /// tick detects (waypoint_reached, then without waiting waypoint_resumed, for each waypoint
    /// passed, arrived) come after the frame that triggered them.
    ///
    /// Allocation-free unless it returns events: it samples the running animation once.
    public mutating func tick(now: Int64) -> (frame: TripFrame?, events: [TripEvent]) {
        let (frame, _, events) = advance(now: now, buildingFrame: true)
        return (frame, events)
    }

    /// `tick` for a trip whose frames nobody takes (every follower is in `segments` mode):
    /// the same marker, state and events, but no frame built, whose numbers (progress, ETA)
    /// are most of a frame's cost. `framedStatus` is the status a frame would have carried,
    /// nil when no frame would have gone out, so the trip's frame numbering and what ends
    /// with its last frame stay as they would be.
    public mutating func tickUnframed(now: Int64) -> (framedStatus: TripStatus?, events: [TripEvent]) {
        let (_, framedStatus, events) = advance(now: now, buildingFrame: false)
        return (framedStatus, events)
    }

    private mutating func advance(now: Int64, buildingFrame: Bool) -> (frame: TripFrame?, framedStatus: TripStatus?, events: [TripEvent]) {
        guard let a = animation, endedAt == nil else { return (nil, nil, []) }
        let running = framedThrough < a.endT
        guard running || needsCheck else { return (nil, nil, []) }
        needsCheck = false
        let t = min(now, a.endT)
        let s = sample(a, at: t)
        var frame: TripFrame?
        var framedStatus: TripStatus?
        if running {
            framedThrough = t
            if lastFramePosition != s.position || frameDue == true {
                lastFramePosition = s.position
                frameDue = nil
                framedStatus = status
                if buildingFrame {
                    let n = numbers(for: s, at: now)
                    frame = TripFrame(
                        t: now, position: s.position, bearingDeg: s.bearingDeg, progress: n.progress,
                        doneM: n.doneM, remainingM: n.remainingM, etaS: n.etaS, leg: leg, status: status,
                        jump: nextFrameIsJump == true)
                }
                nextFrameIsJump = nil
            }
        }
        return (frame, framedStatus, checkWaypointsAndArrival(s, now: now))
    }
}

extension Trip {
    /// True while `tick` still has something to do: an animation not yet framed to its end,
    /// or a waypoint/arrival check due. A trip for which this is false may be left out of
    /// ticks; calling `tick` on it changes nothing.
    public var wantsTick: Bool {
        guard let a = animation, endedAt == nil else { return false }
        return framedThrough < a.endT || needsCheck
    }
}

extension Trip {
    /// The earliest hub time at which a tick could find an event here (the next waypoint or
    /// the destination reached) if only time passes: ticks before it only move the marker.
    /// A hub alone lets a trip nobody takes frames of skip those ticks (`TickSchedule.doze`).
    /// The animation's end when it stops short of them (its last tick still comes then).
    /// Nil when it cannot be told from the animation alone (off the route, going backwards
    /// or in a straight line, holding at a waypoint, arrived, a check due, a waypoint or a
    /// destination not on the route): tick as usual.
    ///
    /// Exact for the linear animation along the route: the marker's along-route distance
    /// reaches `alongM - arrivalBufferM` of the first target at this time (rounded down), and
    /// `isWithinBuffer` is that distance test.
    public var firstPossibleEventTime: Int64? {
        guard let a = animation, endedAt == nil, arrivedAt == nil, holdingPosition == nil, !needsCheck, !isOffRoute,
              a.durationMs > 0, case .alongRoute(let fromM, let toM) = a.path, toM > fromM else { return nil }
        var reach = Double.infinity
        if visitedCount < waypoints.count {
            guard let m = waypoints[visitedCount].alongM else { return nil }
            reach = m
        }
        if destination != nil {
            guard let m = destinationAlongM else { return nil }
            reach = min(reach, m)
        }
        let threshold = reach - config.arrivalBufferM
        if toM < threshold { return a.endT }
        guard fromM < threshold else { return nil }
        let fraction = (threshold - fromM) / (toM - fromM)
        return a.startT + Int64((fraction * Double(a.durationMs)).rounded(.down))
    }
}
