import TrackHubCore

/// The trips a hub holds, and what goes with each: its entry, the ids being created, the
/// animation schedule, the last event sent live, and whose marker state is not yet stored.
/// One per hub, shared by reference by the services of its service thread (the command
/// log, the tick, the HTTP and WebSocket handlers), which alone touch it; every change goes
/// through a method here, which keeps these invariants:
/// - each trip gets a slot no other trip of this process has had (a send queue's frames are
///   replaced by slot, so a reused slot would let one trip's frame replace another's);
/// - an id is being created or exists, never both;
/// - a removed trip leaves nothing behind (schedule, last event, unstored state);
/// - the last event sent live never goes down (a replay never repeats one).
final class TripTable {
    /// Every trip by id.
    private(set) var entries: [String: TripEntry] = [:]
    /// Ids being created (stored, not yet committed): taken, not yet visible.
    private(set) var creating: Set<String> = []
    /// Trips whose marker may move: the only ones a sub-tick looks at.
    var animating: TickSchedule
    private var nextSlot = 1
    private var lastEventSent: [String: Int] = [:]
    /// Trips whose marker state changed and is not yet in a store batch.
    private(set) var unstoredState: Set<String> = []
    /// Trips whose status is `arrived`: what the housekeeping that ends them reads, where a
    /// walk over every trip twice a second had been 6 % of a million-trip hub's CPU.
    /// Kept by `add`, `mutate` and `remove` (`TripEntry.listedArrived` says whether a trip is in).
    private var arrivedTrips: Set<String> = []

    init(tickHz: Int) {
        animating = TickSchedule(tickHz: tickHz)
    }

    subscript(id: String) -> TripEntry? { entries[id] }

    var count: Int { entries.count }

    /// Whether `id` names a trip or one being created.
    func isTaken(_ id: String) -> Bool { entries[id] != nil || creating.contains(id) }

    // MARK: - Creating and removing

    /// Takes `id` for a create in flight (false: it is taken already).
    func reserve(_ id: String) -> Bool {
        if isTaken(id) { return false }
        creating.insert(id)
        return true
    }

    /// Gives back an id whose create did not commit.
    func release(_ id: String) {
        creating.remove(id)
    }

    /// Adds a trip with a new slot (`make` builds its entry for that slot); ends a reservation
    /// of its id. `lastEventSent`: the last event its subscribers have had (restores, snapshots).
    /// False, and nothing changes, when the id is present already (callers check first; a
    /// stored or logged duplicate must not take the hub down).
    @discardableResult
    func add(_ id: String, lastEventSent: Int = 0, _ make: (_ slot: Int) -> TripEntry) -> Bool {
        guard entries[id] == nil else { return false }
        creating.remove(id)
        var entry = make(nextSlot)
        if let arrived = Self.relist(&entry) { list(id, arrived: arrived) }
        entries[id] = entry
        nextSlot += 1
        self.lastEventSent[id] = lastEventSent
        return true
    }

    /// Forgets a trip and everything about it.
    func remove(_ id: String) {
        entries[id] = nil
        arrivedTrips.remove(id)
        animating.remove(id)
        lastEventSent[id] = nil
        unstoredState.remove(id)
    }

    // MARK: - Changing one

    /// Runs `body` on a trip's entry in place (nil: no such trip). Copying an entry out,
    /// changing it and writing it back would make Swift copy the trip's remembered-fix sets
    /// on every fix (copy-on-write with two owners); this never does.
    @discardableResult
    func mutate<Result>(_ id: String, _ body: (inout TripEntry) -> Result) -> Result? {
        guard let index = entries.index(forKey: id) else { return nil }
        let result = body(&entries.values[index])
        if let arrived = Self.relist(&entries.values[index]) { list(id, arrived: arrived) }
        return result
    }

    /// Whether an entry's place in the set of arrived trips must change, and to what
    /// (nil: it is listed as it should be). The set changes only when a trip arrives or
    /// stops being arrived: its id is hashed then, not on every fix or tick.
    private static func relist(_ entry: inout TripEntry) -> Bool? {
        let arrived = entry.trip.status == .arrived
        guard arrived != entry.listedArrived else { return nil }
        entry.listedArrived = arrived
        return arrived
    }

    private func list(_ id: String, arrived: Bool) {
        if arrived { arrivedTrips.insert(id) } else { arrivedTrips.remove(id) }
    }

    /// Calls `body` with every trip's id and entry, in place, for walks that read every
    /// trip (the fleet tick). `for (id, entry) in entries` copies each entry out (its whole
    /// inline struct, with a retain and a release of every reference in it): at 1 000 000
    /// trips such walks took most of the service thread's time (BENCHMARKS.md, "A hub with a
    /// million trips"). `body` must not change the entry nor touch the table.
    func forEachEntryInPlace(_ body: (String, inout TripEntry) -> Void) {
        var index = entries.startIndex
        while index != entries.endIndex {
            body(entries.keys[index], &entries.values[index])
            entries.formIndex(after: &index)
        }
    }

    /// The trips that arrived at or before `cutoff` (ms) and have not ended, by id. Cost:
    /// the trips that are arrived now, not every trip (the housekeeping that ends them asks
    /// twice a second).
    func arrived(atOrBefore cutoff: Int64) -> [String] {
        arrivedTrips.filter { id in
            guard let at = entries[id]?.trip.arrivedAt else { return false }
            return at <= cutoff
        }.sorted()
    }

    // MARK: - Events sent live

    /// The highest event number sent live for a trip (0: none).
    func lastEvent(of trip: String) -> Int { lastEventSent[trip] ?? 0 }

    /// Every trip's last event sent live.
    var lastEventsSent: [String: Int] { lastEventSent }

    /// Notes that event `n` of a trip went out live.
    func noteEventSent(_ n: Int, trip: String) {
        guard entries[trip] != nil else { return }
        lastEventSent[trip] = max(lastEventSent[trip] ?? 0, n)
    }

    // MARK: - Marker state to store

    /// A trip's marker state changed (stored with the next batch).
    func markStateUnstored(_ id: String) { unstoredState.insert(id) }

    /// A trip's marker state goes into the store with its own batch.
    func markStateStored(_ id: String) { unstoredState.remove(id) }

    /// The trips whose state is to be stored now, forgotten here.
    func takeUnstoredStates() -> Set<String> {
        defer { unstoredState.removeAll(keepingCapacity: true) }
        return unstoredState
    }
}
