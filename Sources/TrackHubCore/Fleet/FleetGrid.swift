/// The node numbers of one level of the fleet index, grouped by the square cell of the
/// unit mercator square their centre lies in: the neighbour search of the greedy pass and
/// the box search of viewport queries.
///
/// A cell has side `2^-shift`; only non-empty cells exist. Each cell's nodes are one run
/// of `nodes`, in the order they were given; an open-addressing hash table (linear
/// probing, at most half full) finds a cell's run from its key.
///
/// Why a grid and not a KD-tree: the build is two linear passes (no sort), a radius or
/// box search costs a few cell lookups plus the nodes of those cells, and the pass
/// walks the fleet in Z-order, so consecutive searches touch the same cells.
/// Memory: 4 bytes per node and about 20 per non-empty cell (key, run start, two slots).
///
/// Immutable once built: safe to read from many threads.
struct FleetGrid: Sendable {
    /// Cells per side is `2^shift`.
    let shift: Int
    /// Node numbers, cell after cell.
    private let nodes: ContiguousArray<Int32>
    /// Each cell's key (`cy << 32 | cx`).
    private let cellKeys: ContiguousArray<UInt64>
    /// Where each cell's run starts in `nodes`; one more entry closes the last run.
    private let cellStart: ContiguousArray<Int32>
    /// The hash table: a cell's number + 1, or 0 for an empty slot.
    private let slots: ContiguousArray<Int32>

    /// The number of nodes.
    var count: Int { nodes.count }

    /// The bytes of its arrays (capacity, not counting allocator overhead).
    var approximateBytes: Int {
        nodes.capacity * 4 + cellKeys.capacity * 8 + cellStart.capacity * 4 + slots.capacity * 4
    }

    /// Groups `items` by the cell of `(xs[item], ys[item])`; positions outside the unit
    /// square are put in the nearest edge cell. Cost: O(items), two passes.
    init(items: UnsafeBufferPointer<Int32>, xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, shift: Int) {
        self.shift = shift
        let n = items.count
        let capacity = Self.slotCount(forCells: n)
        var slots = ContiguousArray<Int32>(repeating: 0, count: capacity)
        var cellKeys = ContiguousArray<UInt64>()
        var runLength = ContiguousArray<Int32>()
        var cellOfItem = ContiguousArray<Int32>(repeating: 0, count: n)
        let scale = Self.scale(shift)
        let last = Self.lastCell(shift)
        var previousKey = UInt64.max
        var previousCell: Int32 = 0
        slots.withUnsafeMutableBufferPointer { slots in
            for i in 0..<n {
                let node = Int(items[i])
                let cx = Self.cell(xs[node], scale, last), cy = Self.cell(ys[node], scale, last)
                let key = Self.key(cx, cy)
                // The walk is in Z-order: runs of one cell are common.
                if key != previousKey {
                    var s = Self.slot(cx, cy, capacity: capacity)
                    while true {
                        let found = slots[s]
                        if found == 0 {
                            previousCell = Int32(cellKeys.count)
                            cellKeys.append(key)
                            runLength.append(0)
                            slots[s] = previousCell + 1
                            break
                        }
                        if cellKeys[Int(found) - 1] == key {
                            previousCell = found - 1
                            break
                        }
                        s = (s + 1) & (capacity - 1)
                    }
                    previousKey = key
                }
                runLength[Int(previousCell)] += 1
                cellOfItem[i] = previousCell
            }
        }
        var cellStart = ContiguousArray<Int32>(repeating: 0, count: cellKeys.count + 1)
        var sum: Int32 = 0
        for c in 0..<cellKeys.count {
            cellStart[c] = sum
            sum += runLength[c]
        }
        cellStart[cellKeys.count] = sum
        var cursor = runLength
        for c in 0..<cellKeys.count { cursor[c] = cellStart[c] }
        var grouped = ContiguousArray<Int32>(repeating: 0, count: n)
        for i in 0..<n {
            let c = Int(cellOfItem[i])
            grouped[Int(cursor[c])] = items[i]
            cursor[c] += 1
        }
        self.nodes = grouped
        self.cellKeys = cellKeys
        self.cellStart = cellStart
        self.slots = slots
    }

    /// Calls `body` with every node whose cell meets the closed box: a superset of the
    /// nodes whose centre is inside it (the caller checks what it needs). Cost: the
    /// smaller of the cells the box covers and the non-empty cells, plus their nodes.
    func forEachInCells(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int32) -> Void) {
        guard !nodes.isEmpty, minX <= maxX, minY <= maxY else { return }
        let scale = Self.scale(shift), last = Self.lastCell(shift)
        let x0 = Self.cell(minX, scale, last), x1 = Self.cell(maxX, scale, last)
        let y0 = Self.cell(minY, scale, last), y1 = Self.cell(maxY, scale, last)
        nodes.withUnsafeBufferPointer { nodes in
            cellStart.withUnsafeBufferPointer { start in
                let covered = (x1 - x0 + 1).multipliedReportingOverflow(by: y1 - y0 + 1)
                if covered.overflow || covered.partialValue > cellKeys.count {
                    // A wide box: every non-empty cell is cheaper than every covered one.
                    for (c, key) in cellKeys.enumerated() {
                        let cx = Int(key & 0xffff_ffff), cy = Int(key >> 32)
                        guard cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 else { continue }
                        for k in Int(start[c])..<Int(start[c + 1]) { body(nodes[k]) }
                    }
                    return
                }
                for cy in y0...y1 {
                    for cx in x0...x1 {
                        guard let c = cellNumber(cx, cy) else { continue }
                        for k in Int(start[c])..<Int(start[c + 1]) { body(nodes[k]) }
                    }
                }
            }
        }
    }

    /// Calls `body` with every node whose cell meets the square of half-side `r` around
    /// `(x, y)`: the greedy pass's neighbour search. `memo` remembers the cells the last
    /// searches found, which the next search, a rider further along the Z-order walk,
    /// mostly asks for again.
    @inline(__always)
    func forEachNear(_ x: Double, _ y: Double, _ r: Double, memo: CellMemo, _ body: (Int32) -> Void) {
        guard !nodes.isEmpty else { return }
        let scale = Self.scale(shift), last = Self.lastCell(shift)
        let x0 = Self.cell(x - r, scale, last), x1 = Self.cell(x + r, scale, last)
        let y0 = Self.cell(y - r, scale, last), y1 = Self.cell(y + r, scale, last)
        let covered = (x1 - x0 + 1).multipliedReportingOverflow(by: y1 - y0 + 1)
        if covered.overflow || covered.partialValue > cellKeys.count {
            // Cells far finer than the radius: walking the non-empty ones is cheaper.
            forEachInCells(minX: x - r, minY: y - r, maxX: x + r, maxY: y + r, body)
            return
        }
        nodes.withUnsafeBufferPointer { nodes in
            cellStart.withUnsafeBufferPointer { start in
                for cy in y0...y1 {
                    for cx in x0...x1 {
                        let key = Self.key(cx, cy)
                        let m = (cx & 7) | (cy & 7) << 3
                        let c: Int
                        if memo.keys[m] == key {
                            c = Int(memo.cells[m])
                        } else {
                            c = cellNumber(cx, cy) ?? -1
                            memo.keys[m] = key
                            memo.cells[m] = Int32(c)
                        }
                        guard c >= 0 else { continue }
                        for k in Int(start[c])..<Int(start[c + 1]) { body(nodes[k]) }
                    }
                }
            }
        }
    }

    /// The cells one walk over a grid found last, direct-mapped by the low 3 bits of
    /// their coordinates (64 entries): a cell's number, or −1 for an empty cell.
    final class CellMemo {
        fileprivate let keys = UnsafeMutablePointer<UInt64>.allocate(capacity: 64)
        fileprivate let cells = UnsafeMutablePointer<Int32>.allocate(capacity: 64)

        /// An empty memo, for one grid (cell keys of another grid mean other cells).
        init() {
            keys.initialize(repeating: .max, count: 64)
            cells.initialize(repeating: -1, count: 64)
        }

        deinit {
            keys.deallocate()
            cells.deallocate()
        }
    }

    /// The number of cell `(cx, cy)`, if it has nodes.
    @inline(__always)
    private func cellNumber(_ cx: Int, _ cy: Int) -> Int? {
        let key = Self.key(cx, cy)
        let capacity = slots.count
        var s = Self.slot(cx, cy, capacity: capacity)
        while true {
            let found = Int(slots[s])
            if found == 0 { return nil }
            if cellKeys[found - 1] == key { return found - 1 }
            s = (s + 1) & (capacity - 1)
        }
    }

    // MARK: - Cells and keys

    /// A power of two at least twice `cells` (and at least 16): the table stays half empty.
    static func slotCount(forCells cells: Int) -> Int {
        var capacity = 16
        while capacity < 2 * cells { capacity <<= 1 }
        return capacity
    }

    @inline(__always)
    static func scale(_ shift: Int) -> Double { Double(1 << shift) }

    @inline(__always)
    static func lastCell(_ shift: Int) -> Int { (1 << shift) - 1 }

    /// The cell of a mercator coordinate, clamped to the square (NaN: cell 0).
    @inline(__always)
    static func cell(_ v: Double, _ scale: Double, _ last: Int) -> Int {
        let s = v * scale
        if !(s > 0) { return 0 }
        if s >= Double(last) { return last }
        return Int(s)
    }

    @inline(__always)
    static func key(_ cx: Int, _ cy: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: cy) << 32 | UInt64(truncatingIfNeeded: cx)
    }

    /// Where cell `(cx, cy)`'s search starts: the 4 × 4 block of cells it belongs to gets 16
    /// consecutive slots (one cache line), at a place chosen by Fibonacci hashing of the
    /// block's key; the cell's place in its block picks the slot. A search for a rider's
    /// neighbours (2 × 2 to 3 × 3 cells) then touches one to four cache lines, and so does
    /// the next rider's, where hashing each cell on its own missed the cache on nearly
    /// every look (half the time of a build at 1 000 000 riders).
    @inline(__always)
    static func slot(_ cx: Int, _ cy: Int, capacity: Int) -> Int {
        let blockBits = UInt64(capacity.trailingZeroBitCount - 4)
        let block = key(cx >> 2, cy >> 2)
        let base = blockBits == 0 ? 0 : Int(truncatingIfNeeded: (block &* 0x9E37_79B9_7F4A_7C15) >> (64 - blockBits))
        return base << 4 | (cx & 3) | (cy & 3) << 2
    }
}
