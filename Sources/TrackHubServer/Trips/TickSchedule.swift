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
/// Idle trips are in no phase and cost nothing.
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

    var count: Int { phaseOf.count }

    func contains(_ id: String) -> Bool { phaseOf[id] != nil }

    /// The phase a trip is in (nil: idle).
    func phase(of id: String) -> Int? { phaseOf[id] }

    /// Puts a trip in the phase served next (a new animation's first frame comes soon).
    mutating func scheduleSoon(_ id: String) {
        place(id, in: current)
    }

    /// Keeps a trip where it is, or puts it in the next phase if it was idle.
    mutating func insert(_ id: String) {
        if phaseOf[id] == nil { scheduleSoon(id) }
    }

    mutating func remove(_ id: String) {
        guard let phase = phaseOf.removeValue(forKey: id) else { return }
        members[phase].remove(id)
        moves[phase][id] = nil
        lastLanding[id] = nil
    }

    /// Puts a trip in a given phase (a cluster node: the phase of its next tick's log time).
    mutating func insert(_ id: String, phase: Int) {
        place(id, in: ((phase % phases) + phases) % phases)
    }

    private mutating func place(_ id: String, in phase: Int) {
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
}
