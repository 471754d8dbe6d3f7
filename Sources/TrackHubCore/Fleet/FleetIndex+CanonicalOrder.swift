import Foundation

extension FleetIndex {
    /// What a build leaves for the next one (`FleetIndexBuilder`): its input, its canonical
    /// order (input positions) and what it computed of each rider, in that order
    /// (`riders`). A member of the next input with the same id and the same position is
    /// not projected, hashed or sorted again.
    ///
    /// Memory: the input and the order are shared with the index built from them (no
    /// copy while it lives); the facts and ranks are 44 bytes a rider.
    struct RiderMemo {
        let input: [FleetMember]
        let order: ContiguousArray<Int32>
        /// Each input's place in `order` (−1: left out, no valid position).
        let rank: ContiguousArray<Int32>
        let riders: ContiguousArray<RiderFacts>
    }

    /// The valid members in canonical order: by their cell of a 2^20 × 2^20 mercator grid,
    /// row by row from north to south and west to east in a row, then by member hash,
    /// then by id bytes, then by input position. Returns, in that order, each rider's
    /// place in `input` and what the build needs of it (`RiderFacts`).
    ///
    /// Cost: one pass over `input` computing each rider's facts and sort key, an LSD radix
    /// sort of (key, position) pairs (11-bit digits, a digit all riders share skipped),
    /// then one gather of the facts. The members themselves are not moved: gathering them
    /// too had been a second cache miss per rider (and a retain of each long id).
    ///
    /// With `last` (the memo of the previous build), a member that kept its id and
    /// position keeps its facts and its place in the last order: only the others are
    /// projected and sorted, then merged in. The kept riders are read in the last order,
    /// so their facts are read in the order they are stored. The result is the same
    /// order: the keys are the same, and ties are settled by the same total order.
    static func canonicalOrder(_ input: [FleetMember], reusing last: RiderMemo? = nil)
        -> (order: ContiguousArray<Int32>, riders: ContiguousArray<RiderFacts>, memo: RiderMemo)
    {
        // An entry's `source`: k ≥ 0 for the k-th rider of the last order, −1 − f for the
        // f-th of `freshFacts`.
        var freshFacts = ContiguousArray<RiderFacts>()
        var fresh = ContiguousArray<SortEntry>()
        var kept = ContiguousArray<SortEntry>()
        let lastRiders = last?.riders ?? []
        if let last {
            let source = unchangedSources(input, last.input)
            // For each rider of the last order, its position in this input if it is kept.
            // Written in input order (scattered writes do not stall as scattered reads
            // do), read in the last order.
            var keptAt = ContiguousArray<Int32>(repeating: -1, count: last.order.count)
            for (i, member) in input.enumerated() where member.position.isValid {
                let j = Int(source[i])
                if j >= 0 {
                    keptAt[Int(last.rank[j])] = Int32(i)
                } else {
                    let facts = RiderFacts(member)
                    fresh.append(SortEntry(key: facts.sortKey, index: Int32(i), source: -1 - Int32(freshFacts.count)))
                    freshFacts.append(facts)
                }
            }
            kept.reserveCapacity(last.order.count)
            for k in 0..<last.order.count {
                let i = keptAt[k]
                if i >= 0 { kept.append(SortEntry(key: lastRiders[k].sortKey, index: i, source: Int32(k))) }
            }
        } else {
            fresh.reserveCapacity(input.count)
            freshFacts.reserveCapacity(input.count)
            for (i, member) in input.enumerated() where member.position.isValid {
                let facts = RiderFacts(member)
                fresh.append(SortEntry(key: facts.sortKey, index: Int32(i), source: -1 - Int32(freshFacts.count)))
                freshFacts.append(facts)
            }
        }
        radixSort(&fresh)
        var entries = kept.isEmpty ? fresh : merged(kept, fresh)
        let n = entries.count
        func facts(_ entry: SortEntry) -> RiderFacts {
            entry.source >= 0 ? lastRiders[Int(entry.source)] : freshFacts[Int(-1 - entry.source)]
        }
        // Equal sort keys (the same cell and the same top 24 hash bits) are rare:
        // order each such run by the full hash, then id bytes, then input position.
        var runStart = 0
        while runStart < n {
            var runEnd = runStart + 1
            while runEnd < n && entries[runEnd].key == entries[runStart].key { runEnd += 1 }
            if runEnd - runStart > 1 {
                entries[runStart..<runEnd].sort { a, b in
                    let ha = facts(a).hash, hb = facts(b).hash
                    if ha != hb { return ha < hb }
                    let ida = input[Int(a.index)].id.utf8, idb = input[Int(b.index)].id.utf8
                    if !ida.elementsEqual(idb) { return ida.lexicographicallyPrecedes(idb) }
                    return a.index < b.index
                }
            }
            runStart = runEnd
        }
        var order = ContiguousArray<Int32>()
        var riders = ContiguousArray<RiderFacts>()
        order.reserveCapacity(n)
        riders.reserveCapacity(n)
        lastRiders.withUnsafeBufferPointer { lastRiders in
            freshFacts.withUnsafeBufferPointer { freshFacts in
                for entry in entries {
                    order.append(entry.index)
                    riders.append(entry.source >= 0 ? lastRiders[Int(entry.source)] : freshFacts[Int(-1 - entry.source)])
                }
            }
        }
        // Each input's place in the order (−1: not indexed), for the next build.
        var rank = ContiguousArray<Int32>(repeating: -1, count: input.count)
        rank.withUnsafeMutableBufferPointer { rank in
            for (k, i) in order.enumerated() { rank[Int(i)] = Int32(k) }
        }
        return (order, riders, RiderMemo(input: input, order: order, rank: rank, riders: riders))
    }

    /// For each member of `input`, the position in `last` of the same rider when its id and
    /// position are unchanged, else −1.
    ///
    /// Both inputs are walked side by side: a fleet is listed in the same order from one
    /// tick to the next, with a few riders added or removed. Where the ids differ, the
    /// next few of each list are looked at (`window`) to tell a rider added from one
    /// removed; past that, the rider counts as changed (it is only computed again). After
    /// 64, 128, 256 and 512 such riders in a row (a longer run added or removed), then
    /// every 1 024, the rider is looked for up to 1 024 places either way in `last`: the
    /// lists meet again within twice a run's length, and a list in a new order costs
    /// about two looks a rider more.
    static func unchangedSources(_ input: [FleetMember], _ last: [FleetMember], window: Int = 8) -> ContiguousArray<Int32> {
        var source = ContiguousArray<Int32>(repeating: -1, count: input.count)
        let n = input.count, m = last.count
        let reach = 1_024
        var j = 0
        var i = 0
        var apart = 0  // riders in a row matched with nothing
        while i < n && j < m {
            let id = input[i].id
            if last[j].id == id {
                if last[j].position == input[i].position { source[i] = Int32(j) }
                i += 1
                j += 1
                apart = 0
                continue
            }
            // Removed from `last`: this id a little further on in it.
            if let k = (j + 1..<min(m, j + 1 + window)).first(where: { last[$0].id == id }) {
                j = k
                continue
            }
            // Added to `input`: the last list's rider a little further on in this one.
            let lastID = last[j].id
            if (i + 1..<min(n, i + 1 + window)).contains(where: { input[$0].id == lastID }) {
                i += 1
                continue
            }
            apart += 1
            let look = apart < reach ? apart >= 64 && apart & (apart - 1) == 0 : apart % reach == 0
            if look, let k = (max(0, j - reach)..<min(m, j + reach)).first(where: { last[$0].id == id }) {
                j = k  // found again: matched on the next step
                continue
            }
            i += 1  // replaced, or the lists are apart
            j += 1
        }
        return source
    }

    /// The entries of two lists sorted by key, in one list sorted by key.
    static func merged(_ a: ContiguousArray<SortEntry>, _ b: ContiguousArray<SortEntry>) -> ContiguousArray<SortEntry> {
        var out = ContiguousArray<SortEntry>()
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if b[j].key < a[i].key {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
            }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }

    /// What a build needs of a rider, computed once: its mercator position, member hash
    /// and WGS 84 position (its bounds).
    struct RiderFacts {
        var x: Double
        var y: Double
        var hash: UInt64
        var lon: Double
        var lat: Double

        init(x: Double, y: Double, hash: UInt64, lon: Double, lat: Double) {
            self.x = x
            self.y = y
            self.hash = hash
            self.lon = lon
            self.lat = lat
        }

        /// The facts of a member with a valid position.
        init(_ member: FleetMember) {
            let p = member.position
            self.init(
                x: FleetMercator.x(lon: p.lon), y: FleetMercator.y(lat: p.lat), hash: FleetClusterID.memberHash(member.id),
                lon: p.lon, lat: p.lat)
        }

        /// The first sort key of the canonical order: the rider's cell of a 2^20 × 2^20
        /// grid, row by row, then the top 24 bits of its hash.
        var sortKey: UInt64 {
            let cx = UInt64(min(max(x, 0), 1 - 0x1p-30) * 0x1p20)
            let cy = UInt64(min(max(y, 0), 1 - 0x1p-30) * 0x1p20)
            return (cy << 20 | cx) << 24 | hash >> 40
        }
    }

    /// A rider's first sort key and its position in the input (`source`: where its facts
    /// are, for the canonical order; it fills what would be padding).
    struct SortEntry {
        var key: UInt64
        var index: Int32
        var source: Int32 = 0
    }

    /// Sorts by `key`, stably: LSD radix, 11 bits a pass; the counts of every pass come
    /// from one read, and a pass whose digit is the same for all entries is skipped.
    static func radixSort(_ entries: inout ContiguousArray<SortEntry>) {
        let n = entries.count
        guard n > 1 else { return }
        let bits = 11, passes = 6, buckets = 1 << 11
        var counts = ContiguousArray<Int>(repeating: 0, count: passes * buckets)
        var spare = entries
        entries.withUnsafeMutableBufferPointer { source in
            spare.withUnsafeMutableBufferPointer { target in
                counts.withUnsafeMutableBufferPointer { counts in
                    for entry in source {
                        var key = entry.key
                        for pass in 0..<passes {
                            counts[pass * buckets + Int(truncatingIfNeeded: key) & (buckets - 1)] += 1
                            key >>= UInt64(bits)
                        }
                    }
                    var from = source, to = target
                    var inSource = true
                    for pass in 0..<passes {
                        let base = pass * buckets
                        let shift = UInt64(pass * bits)
                        let first = Int(truncatingIfNeeded: from[0].key >> shift) & (buckets - 1)
                        if counts[base + first] == n { continue }  // every entry has this digit
                        var sum = 0
                        for d in 0..<buckets {
                            let c = counts[base + d]
                            counts[base + d] = sum
                            sum += c
                        }
                        for entry in from {
                            let d = Int(truncatingIfNeeded: entry.key >> shift) & (buckets - 1)
                            to[counts[base + d]] = entry
                            counts[base + d] += 1
                        }
                        swap(&from, &to)
                        inSource.toggle()
                    }
                    if !inSource {
                        // The sorted entries are in the spare buffer: copy them back.
                        for k in 0..<n { source[k] = from[k] }
                    }
                }
            }
        }
    }
}
