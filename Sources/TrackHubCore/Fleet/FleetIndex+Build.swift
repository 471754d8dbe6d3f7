import Foundation

extension FleetIndex {
    /// Clusters `members` at every zoom from `options.minZoom` to `options.maxZoom`.
    ///
    /// Members whose position is not a valid WGS 84 point (`GeoPoint.isValid`) are left
    /// out and not counted in `total`. Trip ids are expected to be unique. The result
    /// does not depend on the order of `members`. Cost: O(n log n) time, O(n) memory.
    public static func build(
        members input: [FleetMember], options: FleetClusterOptions = .standard
    ) -> FleetIndex {
        // Canonical order: by member hash, then by id bytes, then by input position.
        var keyed = ContiguousArray<(key: UInt64, index: Int32)>()
        keyed.reserveCapacity(input.count)
        for (i, member) in input.enumerated() where member.position.isValid {
            keyed.append((FleetClusterID.memberHash(member.id), Int32(i)))
        }
        keyed.sort { a, b in
            if a.key != b.key { return a.key < b.key }
            let ida = input[Int(a.index)].id.utf8, idb = input[Int(b.index)].id.utf8
            if !ida.elementsEqual(idb) { return ida.lexicographicallyPrecedes(idb) }
            return a.index < b.index
        }
        let n = keyed.count
        var members = ContiguousArray<FleetMember>()
        members.reserveCapacity(n)
        for entry in keyed { members.append(input[Int(entry.index)]) }

        var builder = Builder(options: options, capacity: n)
        for (k, member) in members.enumerated() {
            builder.addRider(member.position, key: keyed[k].key)
        }
        builder.clusterAllLevels()
        let (leafStart, leafOrder) = builder.leafRanges(riderCount: n)
        return FleetIndex(
            options: options, members: members,
            nodeX: builder.x, nodeY: builder.y,
            nodeWest: builder.west, nodeSouth: builder.south,
            nodeEast: builder.east, nodeNorth: builder.north,
            nodeCount: builder.count, nodeKey: builder.key, nodeZoom: builder.zoom,
            nodeLeafStart: leafStart, leafOrder: leafOrder,
            trees: builder.trees, margins: builder.margins
        )
    }

    /// The mutable state of one build: the node rows, and the scratch the greedy
    /// passes need (parent links, visit marks, extents).
    private struct Builder {
        let options: FleetClusterOptions
        var x = ContiguousArray<Double>()
        var y = ContiguousArray<Double>()
        var west = ContiguousArray<Double>()
        var south = ContiguousArray<Double>()
        var east = ContiguousArray<Double>()
        var north = ContiguousArray<Double>()
        var count = ContiguousArray<Int32>()
        var key = ContiguousArray<UInt64>()
        var zoom = ContiguousArray<Int8>()
        /// The cluster each node was merged into, or −1.
        var parent = ContiguousArray<Int32>()
        /// The zoom of the pass that last visited each node (`Int8.max`: none yet).
        var mark = ContiguousArray<Int8>()
        /// How far (Chebyshev, mercator) each node's members reach from its centre.
        var extent = ContiguousArray<Double>()
        /// One KD-tree per level, `minZoom` first.
        var trees: [FleetKDTree] = []
        /// One margin per level, `minZoom` first.
        var margins: [Double] = []

        init(options: FleetClusterOptions, capacity n: Int) {
            self.options = options
            let c = max(1, 2 * n)
            x.reserveCapacity(c)
            y.reserveCapacity(c)
            west.reserveCapacity(c)
            south.reserveCapacity(c)
            east.reserveCapacity(c)
            north.reserveCapacity(c)
            count.reserveCapacity(c)
            key.reserveCapacity(c)
            zoom.reserveCapacity(c)
            parent.reserveCapacity(c)
            mark.reserveCapacity(c)
            extent.reserveCapacity(c)
        }

        mutating func addRider(_ p: GeoPoint, key k: UInt64) {
            x.append(FleetMercator.x(lon: p.lon))
            y.append(FleetMercator.y(lat: p.lat))
            west.append(p.lon)
            east.append(p.lon)
            south.append(p.lat)
            north.append(p.lat)
            count.append(1)
            key.append(k)
            zoom.append(Int8(options.maxZoom + 1))
            parent.append(-1)
            mark.append(Int8.max)
            extent.append(0)
        }

        /// Runs the greedy pass for every zoom from `maxZoom` down to `minZoom`,
        /// leaving one KD-tree and one margin per level.
        mutating func clusterAllLevels() {
            let levels = options.maxZoom + 2 - options.minZoom
            trees = []
            margins = Array(repeating: 0, count: levels)
            var items = ContiguousArray<Int32>(0..<Int32(count.count))
            var tree = FleetKDTree(ids: items, xs: x, ys: y)
            var levelTrees = [FleetKDTree?](repeating: nil, count: levels)
            levelTrees[levels - 1] = tree
            var neighbours = ContiguousArray<Int32>()
            var stack = ContiguousArray<Int>()
            stack.reserveCapacity(192)
            for z in stride(from: options.maxZoom, through: options.minZoom, by: -1) {
                let r = options.radius / (options.extent * pow(2, Double(z)))
                var next = ContiguousArray<Int32>()
                next.reserveCapacity(items.count)
                let (formed, margin) = clusterLevel(
                    zoom: z, radius: r, items: items, tree: tree,
                    into: &next, neighbours: &neighbours, stack: &stack)
                if formed { tree = FleetKDTree(ids: next, xs: x, ys: y) }
                levelTrees[z - options.minZoom] = tree
                margins[z - options.minZoom] = margin
                items = next
            }
            trees = levelTrees.map { $0 ?? tree }
        }

        /// One greedy pass at zoom `z` over the items of level `z + 1`; appends the
        /// items of level `z` to `next`. Returns whether any cluster was formed and the
        /// level's margin.
        mutating func clusterLevel(
            zoom z: Int, radius r: Double, items: ContiguousArray<Int32>, tree: FleetKDTree,
            into next: inout ContiguousArray<Int32>,
            neighbours: inout ContiguousArray<Int32>, stack: inout ContiguousArray<Int>
        ) -> (formed: Bool, margin: Double) {
            let z8 = Int8(z)
            let minPoints = options.minPoints
            var formed = false
            var margin = 0.0
            for a32 in items {
                let a = Int(a32)
                if mark[a] <= z8 { continue }
                mark[a] = z8
                let ax = x[a], ay = y[a]
                let ac = Int(count[a])
                var numPoints = ac
                neighbours.removeAll(keepingCapacity: true)
                tree.forEachWithin(ax, ay, r, stack: &stack) { b in
                    if mark[Int(b)] > z8 {
                        neighbours.append(b)
                        numPoints += Int(count[Int(b)])
                    }
                }
                if numPoints > ac && numPoints >= minPoints {
                    let c = Int32(count.count)
                    var wx = ax * Double(ac), wy = ay * Double(ac)
                    var w = west[a], s = south[a], e = east[a], nn = north[a]
                    var k = key[a]
                    parent[a] = c
                    for b32 in neighbours {
                        let b = Int(b32)
                        mark[b] = z8
                        parent[b] = c
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
                    var ext = max(abs(ax - cx), abs(ay - cy)) + extent[a]
                    for b32 in neighbours {
                        let b = Int(b32)
                        ext = max(ext, max(abs(x[b] - cx), abs(y[b] - cy)) + extent[b])
                    }
                    x.append(cx)
                    y.append(cy)
                    west.append(w)
                    south.append(s)
                    east.append(e)
                    north.append(nn)
                    count.append(Int32(numPoints))
                    key.append(k)
                    zoom.append(z8)
                    parent.append(-1)
                    mark.append(Int8.max)
                    extent.append(ext)
                    next.append(c)
                    formed = true
                    margin = max(margin, ext)
                } else {
                    next.append(a32)
                    margin = max(margin, extent[a])
                    if numPoints > 1 {
                        // Fewer than minPoints: the neighbours stay as they are at this zoom.
                        for b32 in neighbours {
                            mark[Int(b32)] = z8
                            next.append(b32)
                            margin = max(margin, extent[Int(b32)])
                        }
                    }
                }
            }
            return (formed, margin)
        }

        /// Numbers the riders so that every node's members are one contiguous run:
        /// returns each node's first position and the riders in that order.
        func leafRanges(riderCount n: Int) -> (ContiguousArray<Int32>, ContiguousArray<Int32>) {
            let nodes = count.count
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
            var order = ContiguousArray<Int32>(repeating: 0, count: n)
            for k in 0..<n { order[Int(start[k])] = Int32(k) }
            return (start, order)
        }
    }
}
