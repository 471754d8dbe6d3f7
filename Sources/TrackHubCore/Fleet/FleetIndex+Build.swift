import Foundation

extension FleetIndex {
    /// Clusters `members` at every zoom from `options.minZoom` to `options.maxZoom`.
    ///
    /// Members whose position is not a valid WGS 84 point (`GeoPoint.isValid`) are left
    /// out and not counted in `total`. Trip ids are expected to be unique. The result
    /// does not depend on the order of `members`: riders are walked in a canonical
    /// order, by ~38 m mercator cells row by row (so that the greedy walk reads each
    /// level's grid in the order it is stored), then by the hash of their trip id.
    /// Cost: O(n) time and memory (a radix sort, then one linear grid pass per zoom),
    /// on the calling thread. A fleet built tick after tick is cheaper with a
    /// `FleetIndexBuilder`, which makes the same index.
    public static func build(members input: [FleetMember], options: FleetClusterOptions = .standard) -> FleetIndex {
        build(members: input, options: options, reusing: nil).index
    }

    /// The index of `input`, and what the next build can reuse of it (`RiderMemo`).
    static func build(members input: [FleetMember], options: FleetClusterOptions, reusing last: RiderMemo?)
        -> (index: FleetIndex, memo: RiderMemo)
    {
        let canonical = canonicalOrder(input, reusing: last)
        let n = canonical.order.count
        var builder = Builder(options: options, riders: n)
        defer { builder.deallocate() }
        canonical.riders.withUnsafeBufferPointer { riders in
            for k in 0..<n { builder.addRider(riders[k], node: k) }
        }
        builder.clusterAllLevels()
        let (leafStart, leafOrder) = builder.leafRanges()
        let index = FleetIndex(
            options: options, members: input, memberOrder: canonical.order,
            clusterX: builder.x.rows(n, builder.nodes), clusterY: builder.y.rows(n, builder.nodes),
            clusterWest: builder.west.rows(n, builder.nodes), clusterSouth: builder.south.rows(n, builder.nodes),
            clusterEast: builder.east.rows(n, builder.nodes), clusterNorth: builder.north.rows(n, builder.nodes),
            clusterCount: builder.count.rows(n, builder.nodes), clusterKey: builder.key.rows(n, builder.nodes),
            clusterZoom: builder.zoom.rows(n, builder.nodes),
            clusterLeafStart: ContiguousArray(leafStart[n...]), leafOrder: leafOrder,
            grids: builder.grids, margins: builder.margins
        )
        return (index, canonical.memo)
    }

    /// The mutable state of one build: the node rows (riders first, then clusters in
    /// the order they are formed), and the scratch the greedy passes need (parent
    /// links, visit marks, extents). Raw storage sized for the most nodes a build can
    /// make (2n), so pointers stay valid while rows are added; freed by `deallocate`.
    private struct Builder {
        let options: FleetClusterOptions
        let riders: Int
        var nodes = 0
        let x: UnsafeMutablePointer<Double>
        let y: UnsafeMutablePointer<Double>
        let west: UnsafeMutablePointer<Double>
        let south: UnsafeMutablePointer<Double>
        let east: UnsafeMutablePointer<Double>
        let north: UnsafeMutablePointer<Double>
        let count: UnsafeMutablePointer<Int32>
        let key: UnsafeMutablePointer<UInt64>
        let zoom: UnsafeMutablePointer<Int8>
        /// The cluster each node was merged into, or −1.
        let parent: UnsafeMutablePointer<Int32>
        /// The zoom of the pass that last visited each node (`Int8.max`: none yet).
        let mark: UnsafeMutablePointer<Int8>
        /// How far (Chebyshev, mercator) each node's members reach from its centre.
        let extent: UnsafeMutablePointer<Double>
        /// Each node's place in the walk of the current pass: neighbours are merged in
        /// walk order, so a cluster's centre (a floating-point sum) does not depend on the
        /// order the grid lists them in.
        let walkPosition: UnsafeMutablePointer<Int32>
        /// The cell of each node in the grid the current pass searches.
        let cellOfNode: UnsafeMutablePointer<Int32>
        /// For each cell of that grid, where the rows above and below it are searched
        /// (`FleetGrid.fillRowLinks`).
        let rowAbove: UnsafeMutablePointer<Int32>
        let rowBelow: UnsafeMutablePointer<Int32>
        /// One grid per level, `minZoom` first.
        var grids: [FleetGrid] = []
        /// One margin per level, `minZoom` first.
        var margins: [Double] = []

        init(options: FleetClusterOptions, riders n: Int) {
            self.options = options
            self.riders = n
            let c = max(1, 2 * n)
            x = .allocate(capacity: c)
            y = .allocate(capacity: c)
            west = .allocate(capacity: c)
            south = .allocate(capacity: c)
            east = .allocate(capacity: c)
            north = .allocate(capacity: c)
            count = .allocate(capacity: c)
            key = .allocate(capacity: c)
            zoom = .allocate(capacity: c)
            parent = .allocate(capacity: c)
            mark = .allocate(capacity: c)
            extent = .allocate(capacity: c)
            walkPosition = .allocate(capacity: c)
            cellOfNode = .allocate(capacity: c)
            rowAbove = .allocate(capacity: max(1, n))
            rowBelow = .allocate(capacity: max(1, n))
        }

        func deallocate() {
            x.deallocate()
            y.deallocate()
            west.deallocate()
            south.deallocate()
            east.deallocate()
            north.deallocate()
            count.deallocate()
            key.deallocate()
            zoom.deallocate()
            parent.deallocate()
            mark.deallocate()
            extent.deallocate()
            walkPosition.deallocate()
            cellOfNode.deallocate()
            rowAbove.deallocate()
            rowBelow.deallocate()
        }

        mutating func addRider(_ rider: RiderFacts, node i: Int) {
            x[i] = rider.x
            y[i] = rider.y
            west[i] = rider.lon
            east[i] = rider.lon
            south[i] = rider.lat
            north[i] = rider.lat
            count[i] = 1
            key[i] = rider.hash
            zoom[i] = Int8(options.maxZoom + 1)
            parent[i] = -1
            mark[i] = Int8.max
            extent[i] = 0
            nodes = max(nodes, i + 1)
        }

        /// The grid of a level's items: cells of side `2^-(z + 2)` for the items of zoom
        /// `z`, at least the radius of the pass at `z − 1` that searches it. Leaves each
        /// item's cell in `cellOfNode` and the row links in `rowAbove` and `rowBelow`,
        /// for that pass.
        func makeGrid(_ items: ContiguousArray<Int32>, zoom z: Int) -> FleetGrid {
            let grid = items.withUnsafeBufferPointer {
                FleetGrid(items: $0, xs: UnsafePointer(x), ys: UnsafePointer(y), shift: z + 2, cellOfNode: cellOfNode)
            }
            grid.fillRowLinks(up: rowAbove, down: rowBelow)
            return grid
        }

        /// Runs the greedy pass for every zoom from `maxZoom` down to `minZoom`,
        /// leaving one grid and one margin per level.
        mutating func clusterAllLevels() {
            let levels = options.maxZoom + 2 - options.minZoom
            margins = Array(repeating: 0, count: levels)
            var items = ContiguousArray<Int32>(0..<Int32(riders))
            var grid = makeGrid(items, zoom: options.maxZoom + 1)
            var levelGrids = [FleetGrid?](repeating: nil, count: levels)
            levelGrids[levels - 1] = grid
            let scratch = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, riders))
            defer { scratch.deallocate() }
            for z in stride(from: options.maxZoom, through: options.minZoom, by: -1) {
                let r = options.radius / (options.extent * pow(2, Double(z)))
                var next = ContiguousArray<Int32>()
                next.reserveCapacity(items.count)
                let margin = clusterLevel(zoom: z, radius: r, items: items, grid: grid, into: &next, neighbours: scratch)
                // Even unchanged items get a grid of this level's cell size: the last
                // level's would be too fine for the radii below (a sparse fleet that never
                // clusters would search 2^19 cells a side at zoom 0).
                grid = makeGrid(next, zoom: z)
                levelGrids[z - options.minZoom] = grid
                margins[z - options.minZoom] = margin
                items = next
            }
            grids = levelGrids.map { $0 ?? grid }
        }

        /// One greedy pass at zoom `z` over the items of level `z + 1`, in order; appends
        /// the items of level `z` to `next`. Returns the level's margin (how far any
        /// item's members reach from its centre). `neighbours` holds at least `riders` entries.
        mutating func clusterLevel(
            zoom z: Int, radius r: Double, items: ContiguousArray<Int32>, grid: FleetGrid,
            into next: inout ContiguousArray<Int32>, neighbours: UnsafeMutablePointer<Int32>
        ) -> Double {
            let z8 = Int8(z)
            let minPoints = options.minPoints
            var margin = 0.0
            let r2 = r * r
            let (x, y, count, mark, extent, walkPosition) = (self.x, self.y, self.count, self.mark, self.extent, self.walkPosition)
            let (cellOfNode, rowAbove, rowBelow) = (self.cellOfNode, UnsafePointer(self.rowAbove), UnsafePointer(self.rowBelow))
            for (p, a) in items.enumerated() { walkPosition[Int(a)] = Int32(p) }
            for a32 in items {
                let a = Int(a32)
                if mark[a] <= z8 { continue }
                mark[a] = z8
                let ax = x[a], ay = y[a]
                let ac = Int(count[a])
                var numPoints = ac
                var found = 0
                grid.forEachNear(cell: Int(cellOfNode[a]), ax, ay, r, up: rowAbove, down: rowBelow) { b32 in
                    let b = Int(b32)
                    guard mark[b] > z8 else { return }
                    let dx = x[b] - ax, dy = y[b] - ay
                    guard dx * dx + dy * dy <= r2 else { return }
                    // Insertion into walk order: lists are short (a few, rarely hundreds).
                    let position = walkPosition[b]
                    var j = found
                    while j > 0 && walkPosition[Int(neighbours[j - 1])] > position {
                        neighbours[j] = neighbours[j - 1]
                        j -= 1
                    }
                    neighbours[j] = b32
                    found += 1
                    numPoints += Int(count[b])
                }
                if numPoints > ac && numPoints >= minPoints {
                    let c = formCluster(seed: a, neighbours: neighbours, found: found, numPoints: numPoints, zoom: z8)
                    next.append(Int32(c))
                    margin = max(margin, extent[c])
                } else {
                    next.append(a32)
                    margin = max(margin, extent[a])
                    if numPoints > 1 {
                        // Fewer than minPoints: the neighbours stay as they are at this zoom.
                        for j in 0..<found {
                            let b = neighbours[j]
                            mark[Int(b)] = z8
                            next.append(b)
                            margin = max(margin, extent[Int(b)])
                        }
                    }
                }
            }
            return margin
        }

        /// Adds the cluster of `seed` and its `found` neighbours, formed at zoom `z8`;
        /// returns its node number.
        mutating func formCluster(
            seed a: Int, neighbours: UnsafeMutablePointer<Int32>, found: Int, numPoints: Int, zoom z8: Int8
        ) -> Int {
            let c = nodes
            nodes += 1
            let ac = Double(count[a])
            var wx = x[a] * ac, wy = y[a] * ac
            var w = west[a], s = south[a], e = east[a], nn = north[a]
            var k = key[a]
            parent[a] = Int32(c)
            for j in 0..<found {
                let b = Int(neighbours[j])
                mark[b] = z8
                parent[b] = Int32(c)
                let bc = Double(count[b])
                wx += x[b] * bc
                wy += y[b] * bc
                w = min(w, west[b])
                s = min(s, south[b])
                e = max(e, east[b])
                nn = max(nn, north[b])
                k = k &+ key[b]
            }
            let cx = wx / Double(numPoints), cy = wy / Double(numPoints)
            var ext = max(abs(x[a] - cx), abs(y[a] - cy)) + extent[a]
            for j in 0..<found {
                let b = Int(neighbours[j])
                ext = max(ext, max(abs(x[b] - cx), abs(y[b] - cy)) + extent[b])
            }
            x[c] = cx
            y[c] = cy
            west[c] = w
            south[c] = s
            east[c] = e
            north[c] = nn
            count[c] = Int32(numPoints)
            key[c] = k
            zoom[c] = z8
            parent[c] = -1
            mark[c] = Int8.max
            extent[c] = ext
            return c
        }

        /// Numbers the riders so that every node's members are one contiguous run:
        /// returns each node's first position and the riders in that order.
        func leafRanges() -> (ContiguousArray<Int32>, ContiguousArray<Int32>) {
            var start = ContiguousArray<Int32>(repeating: 0, count: nodes)
            var cursor = ContiguousArray<Int32>(repeating: 0, count: nodes)
            var rootCursor: Int32 = 0
            // A parent is always formed after its children: walk from the last node back.
            for node in stride(from: nodes - 1, through: 0, by: -1) {
                let p = Int(parent[node])
                if p < 0 {
                    start[node] = rootCursor
                    rootCursor += count[node]
                } else {
                    start[node] = cursor[p]
                    cursor[p] += count[node]
                }
                cursor[node] = start[node]
            }
            var order = ContiguousArray<Int32>(repeating: 0, count: riders)
            for k in 0..<riders { order[Int(start[k])] = Int32(k) }
            return (start, order)
        }
    }
}

extension UnsafeMutablePointer {
    /// A copy of the elements from `start` up to `end`.
    fileprivate func rows(_ start: Int, _ end: Int) -> ContiguousArray<Pointee> {
        ContiguousArray(UnsafeBufferPointer(start: self + start, count: end - start))
    }
}
