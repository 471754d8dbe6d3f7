/// Which moving trips a timer wake-up looks at: the one tick scheduler of both command logs.
/// A hub alone walks the phases one per wake-up (`takeDue`); a cluster node reads the phase
/// of each sub-tick of log time it has reached (`members(ofPhase:)`, RedisCommandLog+Tick).
///
/// The tick (`--tick-hz`) is split into `phases` sub-ticks, and each moving trip belongs to
/// one phase: it is sampled once per tick, on its phase. Two things follow. The work and the
/// writes of a tick are spread over the whole tick period instead of one burst (the last
/// subscriber of a 10 000-frame burst would otherwise wait for the 9 999 writes before it).
/// And a trip that just got a fix is moved to the next phase, so its first frame goes out
/// within one sub-tick of the commit rather than up to a whole tick later; its frames then
/// keep coming every tick from there. Idle trips are in no phase and cost nothing.
struct TickSchedule {
    let phases: Int
    private var members: [Set<String>]
    private var phaseOf: [String: Int] = [:]
    /// The phase the next wake-up serves.
    private(set) var current = 0

    /// Sub-ticks per tick: as many as keep the timer at or under ~200 wake-ups per second, at most 20.
    init(tickHz: Int) {
        phases = max(1, min(20, 200 / max(1, tickHz)))
        members = Array(repeating: [], count: phases)
    }

    var count: Int { phaseOf.count }

    func contains(_ id: String) -> Bool { phaseOf[id] != nil }

    /// The phase a trip is in (nil: idle).
    func phase(of id: String) -> Int? { phaseOf[id] }

    /// Puts a trip in the phase served next (a new animation's first frame comes soon).
    mutating func scheduleSoon(_ id: String) {
        let phase = current
        if let old = phaseOf[id] {
            if old == phase { return }
            members[old].remove(id)
        }
        phaseOf[id] = phase
        members[phase].insert(id)
    }

    /// Keeps a trip where it is, or puts it in the next phase if it was idle.
    mutating func insert(_ id: String) {
        if phaseOf[id] == nil { scheduleSoon(id) }
    }

    mutating func remove(_ id: String) {
        guard let phase = phaseOf.removeValue(forKey: id) else { return }
        members[phase].remove(id)
    }

    /// Puts a trip in a given phase (a cluster node: the phase of its next tick's log time).
    mutating func insert(_ id: String, phase: Int) {
        let phase = ((phase % phases) + phases) % phases
        if let old = phaseOf[id] {
            if old == phase { return }
            members[old].remove(id)
        }
        phaseOf[id] = phase
        members[phase].insert(id)
    }

    /// The trips of one phase, without moving on.
    func members(ofPhase phase: Int) -> Set<String> {
        members[((phase % phases) + phases) % phases]
    }

    /// The trips of the phase due now; advances to the next phase.
    mutating func takeDue() -> Set<String> {
        let due = members[current]
        current = (current + 1) % phases
        return due
    }
}
