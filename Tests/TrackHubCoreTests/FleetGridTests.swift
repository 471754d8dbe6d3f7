import Testing

@testable import TrackHubCore

/// `FleetGrid` groups a level's items by cell: its cells row by row, each cell's items in
/// the order given (the greedy pass relies on that order), at fine and coarse levels.
@Suite struct FleetGridTests {
    /// The items in the order a search of the whole square visits them.
    func visited(_ grid: FleetGrid) -> [Int32] {
        var out: [Int32] = []
        grid.forEachInCells(minX: 0, minY: 0, maxX: 1, maxY: 1) { out.append($0) }
        return out
    }

    @Test(arguments: [(4, 500), (10, 3_000), (19, 2_000), (31, 1_000)])
    func itemsAreGroupedByCellRowByRowInTheirGivenOrder(shift: Int, count: Int) {
        var rng = SplitMix64(seed: UInt64(shift * 1_000 + count))
        // Clumped positions, so that many cells hold several items; some outside the square.
        var xs: [Double] = []
        var ys: [Double] = []
        for _ in 0..<count {
            xs.append(rng.uniform(-0.01, 0.3) + Double(rng.next() % 4) * 0.1)
            ys.append(rng.uniform(0.2, 0.5) + Double(rng.next() % 3) * 0.2)
        }
        let items = (0..<Int32(count)).shuffled(using: &rng)
        var cellOfNode = [Int32](repeating: -1, count: count)
        let grid = items.withUnsafeBufferPointer { items in
            cellOfNode.withUnsafeMutableBufferPointer { cells in
                FleetGrid(items: items, xs: xs, ys: ys, shift: shift, cellOfNode: cells.baseAddress)
            }
        }
        let scale = FleetGrid.scale(shift), last = FleetGrid.lastCell(shift)
        func key(_ item: Int32) -> UInt64 {
            FleetGrid.key(FleetGrid.cell(xs[Int(item)], scale, last), FleetGrid.cell(ys[Int(item)], scale, last), shift)
        }
        // A stable sort by cell key: row by row, west to east, ties in the given order.
        let expected = items.enumerated().sorted { a, b in
            let ka = key(a.element), kb = key(b.element)
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
        let order = visited(grid)
        #expect(order.count == expected.count && zip(order, expected).allSatisfy { $0 == $1 }, "items out of place")
        #expect(grid.count == count)
        #expect(grid.cellCount == Set(items.map(key)).count)
        // Each item's cell number is its cell's place among the non-empty cells.
        let cellNumbers = expected.map { cellOfNode[Int($0)] }
        #expect(cellNumbers.first == 0 && cellNumbers.last == Int32(grid.cellCount - 1))
        #expect(zip(expected, expected.dropFirst()).allSatisfy { a, b in
            (key(a) == key(b)) == (cellOfNode[Int(a)] == cellOfNode[Int(b)])
        })
        #expect(zip(cellNumbers, cellNumbers.dropFirst()).allSatisfy { $1 - $0 == 0 || $1 - $0 == 1 })
    }
}
