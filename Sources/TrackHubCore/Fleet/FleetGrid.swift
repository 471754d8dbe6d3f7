/// The node numbers of one level of the fleet index, grouped by the square cell of the
/// unit mercator square their centre lies in: the neighbour search of the greedy pass and
/// the box search of viewport queries.
///
/// A cell has side `2^-shift`; only non-empty cells exist, sorted row by row (north to
/// south, then west to east), so the cells of one row are one run and a row's cells near
/// a point are found by a binary search. Each cell's nodes are one run of `nodes`, in the
/// order they were given.
///
/// Why sorted cells and not a hash table or a KD-tree: the greedy pass walks the fleet row
/// by row too, so its searches read the cells, and the rows above and below (found once
/// per cell by `fillRowLinks`), in the order they are stored. A hash table of cells
/// missed the cache on most of its looks (half of a clustering pass at a million riders).
/// Memory: 4 bytes per node and 12 per non-empty cell.
///
/// Immutable once built: safe to read from many threads.
struct FleetGrid: Sendable {
    /// Cells per side is `2^shift`.
    let shift: Int
    /// Node numbers, cell after cell.
    private let nodes: ContiguousArray<Int32>
    /// Each non-empty cell's key (`cy << shift | cx`), ascending.
    private let cellKeys: ContiguousArray<UInt64>
    /// Where each cell's run starts in `nodes`; one more entry closes the last run.
    private let cellStart: ContiguousArray<Int32>

    /// The number of nodes.
    var count: Int { nodes.count }

    /// The number of non-empty cells.
    var cellCount: Int { cellKeys.count }

    /// The bytes of its arrays (capacity, not counting allocator overhead).
    var approximateBytes: Int {
        nodes.capacity * 4 + cellKeys.capacity * 8 + cellStart.capacity * 4
    }

    /// Groups `items` by the cell of `(xs[item], ys[item])`; positions outside the unit
    /// square are put in the nearest edge cell. When `cellOfNode` is given, it is set to
    /// each item's cell number (`cellOfNode[item]`). Cost: O(items), a radix sort of
    /// (cell, item) pairs that keeps the items of a cell in their given order.
    init(
        items: UnsafeBufferPointer<Int32>, xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, shift: Int,
        cellOfNode: UnsafeMutablePointer<Int32>? = nil
    ) {
        self.shift = shift
        let n = items.count
        let scale = Self.scale(shift)
        let last = Self.lastCell(shift)
        var entries = ContiguousArray<FleetIndex.SortEntry>()
        entries.reserveCapacity(n)
        for item in items {
            let node = Int(item)
            let cx = Self.cell(xs[node], scale, last), cy = Self.cell(ys[node], scale, last)
            entries.append(FleetIndex.SortEntry(key: Self.key(cx, cy, shift), index: item))
        }
        FleetIndex.radixSort(&entries)
        var nodes = ContiguousArray<Int32>()
        var cellKeys = ContiguousArray<UInt64>()
        var cellStart = ContiguousArray<Int32>()
        nodes.reserveCapacity(n)
        var previousKey = UInt64.max
        for (k, entry) in entries.enumerated() {
            if entry.key != previousKey {
                cellKeys.append(entry.key)
                cellStart.append(Int32(k))
                previousKey = entry.key
            }
            nodes.append(entry.index)
            cellOfNode?[Int(entry.index)] = Int32(cellKeys.count - 1)
        }
        cellStart.append(Int32(n))
        self.nodes = nodes
        self.cellKeys = cellKeys
        self.cellStart = cellStart
    }

    /// Calls `body` with every node whose cell meets the closed box: a superset of the
    /// nodes whose centre is inside it (the caller checks what it needs). Cost: a binary
    /// search per row the box covers, or one read of every cell when that is less, plus
    /// the nodes of the cells met.
    func forEachInCells(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int32) -> Void) {
        guard !nodes.isEmpty, minX <= maxX, minY <= maxY else { return }
        let scale = Self.scale(shift), last = Self.lastCell(shift)
        let x0 = Self.cell(minX, scale, last), x1 = Self.cell(maxX, scale, last)
        let y0 = Self.cell(minY, scale, last), y1 = Self.cell(maxY, scale, last)
        let m = cellKeys.count
        nodes.withUnsafeBufferPointer { nodes in
            cellStart.withUnsafeBufferPointer { start in
                cellKeys.withUnsafeBufferPointer { keys in
                    let rows = y1 - y0 + 1
                    if rows * (Int.bitWidth - m.leadingZeroBitCount) >= m {
                        // A tall box: reading every cell is cheaper than a search per row.
                        for c in 0..<m {
                            let (cx, cy) = Self.coordinates(keys[c], shift)
                            guard cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 else { continue }
                            for k in Int(start[c])..<Int(start[c + 1]) { body(nodes[k]) }
                        }
                        return
                    }
                    for cy in y0...y1 {
                        let hi = Self.key(x1, cy, shift)
                        var c = Self.lowerBound(keys, Self.key(x0, cy, shift))
                        while c < m && keys[c] <= hi {
                            for k in Int(start[c])..<Int(start[c + 1]) { body(nodes[k]) }
                            c += 1
                        }
                    }
                }
            }
        }
    }

    /// For every cell, where the search of the row above and of the row below starts:
    /// `up[c]`, the first cell at or after `(cx − 1, cy − 1)`; `down[c]`, the first at or
    /// after `(cx − 1, cy + 1)`. Both move forward as `c` does: two pointers, one pass.
    /// `up` and `down` hold at least `cellCount` entries.
    func fillRowLinks(up: UnsafeMutablePointer<Int32>, down: UnsafeMutablePointer<Int32>) {
        let m = cellKeys.count
        cellKeys.withUnsafeBufferPointer { keys in
            var above = 0, below = 0
            for c in 0..<m {
                let (cx, cy) = Self.coordinates(keys[c], shift)
                let west = max(cx - 1, 0)
                let upKey = cy == 0 ? 0 : Self.key(west, cy - 1, shift)
                while above < m && keys[above] < upKey { above += 1 }
                up[c] = Int32(above)
                let downKey = Self.key(west, cy + 1, shift)
                while below < m && keys[below] < downKey { below += 1 }
                down[c] = Int32(below)
            }
        }
    }

    /// Calls `body` with every node whose cell meets the square of half-side `r` around
    /// `(x, y)`, the position of a node of this grid in cell `cell`: the greedy pass's
    /// neighbour search. With `r` at most a cell's side the square meets the node's row
    /// and the rows above and below, each within a cell of the node's: the search starts
    /// where `fillRowLinks` said and reads forward. A larger `r` searches as a box does.
    @inline(__always)
    func forEachNear(
        cell c: Int, _ x: Double, _ y: Double, _ r: Double,
        up: UnsafePointer<Int32>, down: UnsafePointer<Int32>, _ body: (Int32) -> Void
    ) {
        let scale = Self.scale(shift), last = Self.lastCell(shift)
        let x0 = Self.cell(x - r, scale, last), x1 = Self.cell(x + r, scale, last)
        let y0 = Self.cell(y - r, scale, last), y1 = Self.cell(y + r, scale, last)
        let m = cellKeys.count
        nodes.withUnsafeBufferPointer { nodes in
            cellStart.withUnsafeBufferPointer { start in
                cellKeys.withUnsafeBufferPointer { keys in
                    let (cx, cy) = Self.coordinates(keys[c], shift)
                    guard x0 >= cx - 1, x1 <= cx + 1, y0 >= cy - 1, y1 <= cy + 1 else {
                        forEachInCells(minX: x - r, minY: y - r, maxX: x + r, maxY: y + r, body)
                        return
                    }
                    for row in y0...y1 {
                        let lo = Self.key(x0, row, shift), hi = Self.key(x1, row, shift)
                        var i: Int
                        if row == cy {
                            i = c > 0 && keys[c - 1] >= lo ? c - 1 : c
                        } else {
                            i = Int(row < cy ? up[c] : down[c])
                        }
                        while i < m && keys[i] < lo { i += 1 }
                        while i < m && keys[i] <= hi {
                            for k in Int(start[i])..<Int(start[i + 1]) { body(nodes[k]) }
                            i += 1
                        }
                    }
                }
            }
        }
    }

    // MARK: - Cells and keys

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

    /// A cell's key: sorted keys are in row order, then west to east.
    @inline(__always)
    static func key(_ cx: Int, _ cy: Int, _ shift: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: cy) << UInt64(shift) | UInt64(truncatingIfNeeded: cx)
    }

    /// A cell's column and row from its key.
    @inline(__always)
    static func coordinates(_ key: UInt64, _ shift: Int) -> (cx: Int, cy: Int) {
        (Int(truncatingIfNeeded: key & (1 << UInt64(shift) - 1)), Int(truncatingIfNeeded: key >> UInt64(shift)))
    }

    /// The first place in ascending `keys` whose key is at least `key`.
    static func lowerBound(_ keys: UnsafeBufferPointer<UInt64>, _ key: UInt64) -> Int {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
