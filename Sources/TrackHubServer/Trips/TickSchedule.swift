import TrackHubCore

/// Which moving trips a timer wake-up looks at: the one tick scheduler of both command logs.
/// A hub alone walks the phases one per wake-up (`takeDue`); a cluster node reads the phase
/// of each sub-tick of log time it has reached (`members(ofPhase:)`, RedisCommandLog+Tick).
///
/// The tick (`--tick-hz`) is split into `phases` sub-ticks, and each moving trip belongs to
/// one phase: it is sampled once per tick, on its phase. Two things follow. The work and the
/// writes of a tick are spread over the whole tick period instead of one burst (the last
/// subscriber of a 10 000-frame burst would otherwise wait for the 9 999 writes before it).
/// And an idle trip that gets a fix joins the next phase, so its first frame goes out within
/// one sub-tick of the commit. A trip already moving keeps its phase when a fix lands
/// (PROTOCOL 6.3: one frame per trip per tick), so that fix's first frame waits for the
/// trip's phase, up to a whole tick; `follow` moves the phase to where its courier's fixes
/// land, so that the next fixes' frames come soon after their commits.
/// Idle trips are in no phase and cost nothing, and so do dozing ones (`doze`): moving
/// trips that a hub alone need not tick for a while.
struct TickSchedule {
    let phases: Int
    private var members: [Set<String>]
    private var phaseOf: [String: Int] = [:]
    /// Trips on their way to the phase their courier's fixes land in (`follow`), by the
    /// phase they are in now. At most one entry per scheduled trip.
    private var moves: [[String: PhaseMove]]
    /// The phase served next when each scheduled trip's last fix was committed (`follow`):
    /// a trip moves only for a courier whose fixes land in the same place twice. At most
    /// one entry per scheduled trip.
    private var lastLanding: [String: Int] = [:]
    /// Dozing trips (`doze`), by the hub time they wake; in no phase meanwhile.
    private var dozing: [String: Int64] = [:]
    /// The dozing trips by wake time; an entry whose trip woke or dozed again since is skipped.
    private var wakeups = MinHeap<Int64, String>()
    /// The phase the next wake-up serves.
    private(set) var current = 0
    /// Trips moved to the phase their courier's fixes land in, since the start (`follow`).
    private(set) var phaseMoves = 0

    /// Sub-ticks per tick: as many as keep the timer at or under ~200 wake-ups per second, at most 20.
    init(tickHz: Int) {
        phases = Self.phases(tickHz: tickHz)
        members = Array(repeating: [], count: phases)
        moves = Array(repeating: [:], count: phases)
    }

    /// The `phases` of a schedule at `tickHz`, for a thread other than the service thread: the
    /// schedule itself is the service thread's (reading it while a sub-tick changes it is a
    /// race, ThreadSanitizer found one in the tests' `waitForHubTime`).
    static func phases(tickHz: Int) -> Int { max(1, min(20, 200 / max(1, tickHz))) }

    /// Moving trips: in a phase or dozing.
    var count: Int { phaseOf.count + dozing.count }

    func contains(_ id: String) -> Bool { phaseOf[id] != nil || dozing[id] != nil }

    /// The phase a trip is in (nil: idle, or dozing).
    func phase(of id: String) -> Int? { phaseOf[id] }

    /// Puts a trip in the phase served next (a new animation's first frame comes soon).
    mutating func scheduleSoon(_ id: String) {
        place(id, in: current)
    }

    /// Keeps a trip where it is, or puts it in the next phase if it was idle or dozing.
    mutating func insert(_ id: String) {
        if phaseOf[id] == nil { scheduleSoon(id) }
    }

    mutating func remove(_ id: String) {
        dozing[id] = nil
        lastLanding[id] = nil
        guard let phase = phaseOf.removeValue(forKey: id) else { return }
        members[phase].remove(id)
        moves[phase][id] = nil
    }

    /// Puts a trip in a given phase (a cluster node: the phase of its next tick's log time).
    mutating func insert(_ id: String, phase: Int) {
        place(id, in: ((phase % phases) + phases) % phases)
    }

    private mutating func place(_ id: String, in phase: Int) {
        if !dozing.isEmpty { dozing[id] = nil }
        if let old = phaseOf[id] {
            moves[old][id] = nil
            if old == phase { return }
            members[old].remove(id)
        }
        phaseOf[id] = phase
        members[phase].insert(id)
    }

    // MARK: Following the courier (a hub alone)

    /// Sub-ticks between a fix's commit and the phase a followed trip moves to: a courier's
    /// next fix that lands this much later than this one still makes that phase's frame.
    var followMargin: Int { min(2, phases - 1) }
    /// A fix whose first frame comes within this many sub-ticks of its commit leaves the
    /// trip's phase alone (a quarter of a tick: a courier's jitter moves nothing).
    var followSlack: Int { max(followMargin, phases / 4) }

    /// A fix was committed for `id` just now (before the next wake-up). An idle trip joins the
    /// next phase. A moving trip whose phase comes more than `followSlack` sub-ticks later
    /// moves to the phase `followMargin` sub-ticks from now, so that a courier sending at a
    /// steady cadence (a whole number of ticks, as phone apps do: 1 s, 5 s) has the next
    /// fixes' first frames soon after their commits, not up to a tick later. It moves only
    /// when the trip's last fix landed within a sub-tick of the same place in the tick: a
    /// courier whose fixes land anywhere (a loaded hub's commits, an irregular app) would
    /// gain nothing from a move, and each move costs a frame.
    ///
    /// The move never brings two frames within a tick: the trip keeps its phase for the
    /// frame that shows this fix, and at its serve a tick after that it moves instead of
    /// ticking, so that one gap between its frames is longer than a tick (under two), once.
    mutating func follow(_ id: String) {
        let landing = lastLanding.updateValue(current, forKey: id)
        guard let phase = phaseOf[id] else { return scheduleSoon(id) }
        let wait = (phase - current + phases) % phases
        let target = (current + followMargin) % phases
        // Steady: the last fix landed within a sub-tick of this one, either way round the tick.
        let steady = landing.map { ($0 - current + phases + 1) % phases <= 2 } ?? false
        if wait <= followSlack || target == phase || !steady {
            moves[phase][id] = nil
        } else {
            moves[phase][id] = PhaseMove(to: target, armed: false)
        }
    }

    /// One of the trips that `follow` moves: at the first serve of its phase it ticks as
    /// usual (`armed` becomes true), at the second it moves to `to` without ticking.
    private struct PhaseMove {
        var to: Int
        var armed: Bool
    }

    /// Moves the armed trips of `phase` to their new phase, and arms the others.
    private mutating func applyMoves(leaving phase: Int) {
        guard !moves[phase].isEmpty else { return }
        var waiting: [String: PhaseMove] = [:]
        for (id, move) in moves[phase] {
            if move.armed {
                members[phase].remove(id)
                members[move.to].insert(id)
                phaseOf[id] = move.to
                phaseMoves += 1
            } else {
                waiting[id] = PhaseMove(to: move.to, armed: true)
            }
        }
        moves[phase] = waiting
    }

    // MARK: Serving

    /// The trips of one phase, without moving on.
    func members(ofPhase phase: Int) -> Set<String> {
        members[((phase % phases) + phases) % phases]
    }

    /// The trips of the phase due now; advances to the next phase.
    mutating func takeDue() -> Set<String> {
        applyMoves(leaving: current)
        let due = members[current]
        current = (current + 1) % phases
        return due
    }

    // MARK: Dozing (a hub alone)

    /// Takes a trip out of its phase until hub time `t` (TripAnimator: nobody takes its
    /// frames and no tick before `t` can find an event, `Trip.firstPossibleEventTime`). It
    /// still counts as moving; `wakeDozers` puts it back in the phase served next at `t`,
    /// and `insert`, `scheduleSoon`, `follow` and `wake` at once (a fix, a command, a frame
    /// follower). Nothing but time is saved: the ticks it skips would only have moved a
    /// marker that nobody is sent.
    mutating func doze(_ id: String, until t: Int64) {
        guard let phase = phaseOf.removeValue(forKey: id) else { return }
        members[phase].remove(id)
        moves[phase][id] = nil
        dozing[id] = t
        wakeups.push(t, id)
        // Entries of trips that woke early stay in the heap until their time: bounded here.
        if wakeups.count > 2 * dozing.count + Self.staleWakeupsKept { rebuildWakeups() }
    }

    /// A dozing trip back in the phase served next (something changed what it may need).
    mutating func wake(_ id: String) {
        if dozing[id] != nil { scheduleSoon(id) }
    }

    /// Puts the trips whose doze ends at or before `now` back in the phase served next.
    mutating func wakeDozers(now: Int64) {
        while let t = wakeups.minKey, t <= now, let (t, id) = wakeups.pop() {
            if dozing[id] == t { scheduleSoon(id) }
        }
    }

    /// Trips dozing now.
    var dozingCount: Int { dozing.count }
    /// Wake-ups held, stale ones included (tests: their bound).
    var pendingWakeups: Int { wakeups.count }

    /// Entries of trips that woke early the wake-up heap may hold beyond twice the dozing trips.
    static let staleWakeupsKept = 1024

    private mutating func rebuildWakeups() {
        wakeups.removeAll()
        for (id, t) in dozing { wakeups.push(t, id) }
    }
}
