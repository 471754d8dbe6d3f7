import Dispatch
import Foundation

extension FleetIndex {
    /// Clusters `members` at every zoom from `options.minZoom` to `options.maxZoom`.
    ///
    /// Members whose position is not a valid WGS 84 point (`GeoPoint.isValid`) are left
    /// out and not counted in `total`. Trip ids are expected to be unique. The result
    /// does not depend on the order of `members`: riders are walked in a canonical
    /// order, by ~38 m mercator cells along a Z-order curve (so that the greedy walk
    /// stays in cache), then by the hash of their trip id.
    /// With `parallel` (the default), large levels use a second thread for their
    /// neighbour queries and KD-tree sorts; the result is the same either way.
    /// Cost: O(n log n) time, O(n) memory.
    public static func build(
        members input: [FleetMember], options: FleetClusterOptions = .standard, parallel: Bool = true
    ) -> FleetIndex {
        let canonical = canonicalOrder(input)
        let members = canonical.members
        let n = members.count
        var builder = Builder(options: options, riders: n, parallel: parallel)
        defer { builder.deallocate() }
        for k in 0..<n {
            builder.addRider(members[k].position, x: canonical.x[k], y: canonical.y[k], key: canonical.hash[k], node: k)
        }
        builder.clusterAllLevels()
        let (leafStart, leafOrder) = builder.leafRanges()
        return FleetIndex(
            options: options, members: members,
            clusterX: builder.x.rows(n, builder.nodes), clusterY: builder.y.rows(n, builder.nodes),
            clusterWest: builder.west.rows(n, builder.nodes), clusterSouth: builder.south.rows(n, builder.nodes),
            clusterEast: builder.east.rows(n, builder.nodes), clusterNorth: builder.north.rows(n, builder.nodes),
            clusterCount: builder.count.rows(n, builder.nodes), clusterKey: builder.key.rows(n, builder.nodes),
            clusterZoom: builder.zoom.rows(n, builder.nodes),
            clusterLeafStart: ContiguousArray(leafStart[n...]), leafOrder: leafOrder,
            trees: builder.trees, margins: builder.margins
        )
    }

    /// The valid members in canonical order: by Z-order of their 2^20 × 2^20 mercator
    /// cell, then by member hash, then by id bytes, then by input position.
    /// Also returns, in that order, their mercator coordinates and member hashes.
    static func canonicalOrder(_ input: [FleetMember]) -> (
        members: ContiguousArray<FleetMember>, x: ContiguousArray<Double>, y: ContiguousArray<Double>,
        hash: ContiguousArray<UInt64>
    ) {
        var px = ContiguousArray<Double>()
        var py = ContiguousArray<Double>()
        px.reserveCapacity(input.count)
        py.reserveCapacity(input.count)
        var sortKey = ContiguousArray<UInt64>()
        var hash = ContiguousArray<UInt64>()
        var index = ContiguousArray<Int32>()
        sortKey.reserveCapacity(input.count)
        hash.reserveCapacity(input.count)
        index.reserveCapacity(input.count)
        for (i, member) in input.enumerated() where member.position.isValid {
            let p = member.position
            let mx = FleetMercator.x(lon: p.lon), my = FleetMercator.y(lat: p.lat)
            px.append(mx)
            py.append(my)
            let cx = UInt64(min(max(mx, 0), 1 - 0x1p-30) * 0x1p20)
            let cy = UInt64(min(max(my, 0), 1 - 0x1p-30) * 0x1p20)
            let key = FleetClusterID.memberHash(member.id)
            sortKey.append(zOrder(cx, cy) << 24 | key >> 40)
            hash.append(key)
            index.append(Int32(i))
        }
        let n = index.count
        // LSD radix sort of (sortKey, index) on the 64-bit key, 16 bits a pass.
        var order = ContiguousArray<Int32>(0..<Int32(n))
        var spare = ContiguousArray<Int32>(repeating: 0, count: n)
        var counts = ContiguousArray<Int>(repeating: 0, count: 1 << 16)
        for shift in stride(from: 0, to: 64, by: 16) {
            for j in 0..<counts.count { counts[j] = 0 }
            for k in sortKey { counts[Int(truncatingIfNeeded: k >> UInt64(shift)) & 0xffff] += 1 }
            var sum = 0
            for j in 0..<counts.count {
                let c = counts[j]
                counts[j] = sum
                sum += c
            }
            for o in order {
                let d = Int(truncatingIfNeeded: sortKey[Int(o)] >> UInt64(shift)) & 0xffff
                spare[counts[d]] = o
                counts[d] += 1
            }
            swap(&order, &spare)
        }
        // Equal sort keys (the same cell and the same top 24 hash bits) are rare:
        // order each such run by the full hash, then id bytes, then input position.
        var runStart = 0
        while runStart < n {
            var runEnd = runStart + 1
            while runEnd < n && sortKey[Int(order[runEnd])] == sortKey[Int(order[runStart])] { runEnd += 1 }
            if runEnd - runStart > 1 {
                order[runStart..<runEnd].sort { a, b in
                    let ha = hash[Int(a)], hb = hash[Int(b)]
                    if ha != hb { return ha < hb }
                    let ia = Int(index[Int(a)]), ib = Int(index[Int(b)])
                    let ida = input[ia].id.utf8, idb = input[ib].id.utf8
                    if !ida.elementsEqual(idb) { return ida.lexicographicallyPrecedes(idb) }
                    return ia < ib
                }
            }
            runStart = runEnd
        }
        var members = ContiguousArray<FleetMember>()
        var xs = ContiguousArray<Double>()
        var ys = ContiguousArray<Double>()
        var hashes = ContiguousArray<UInt64>()
        members.reserveCapacity(n)
        xs.reserveCapacity(n)
        ys.reserveCapacity(n)
        hashes.reserveCapacity(n)
        for o in order {
            let k = Int(o)
            members.append(input[Int(index[k])])
            xs.append(px[k])
            ys.append(py[k])
            hashes.append(hash[k])
        }
        return (members, xs, ys, hashes)
    }

    /// Interleaves the low 20 bits of `x` (even bits) and `y` (odd bits).
    static func zOrder(_ x: UInt64, _ y: UInt64) -> UInt64 {
        func spread(_ v: UInt64) -> UInt64 {
            var v = v & 0xf_ffff
            v = (v | v << 16) & 0x0000_ffff_0000_ffff
            v = (v | v << 8) & 0x00ff_00ff_00ff_00ff
            v = (v | v << 4) & 0x0f0f_0f0f_0f0f_0f0f
            v = (v | v << 2) & 0x3333_3333_3333_3333
            v = (v | v << 1) & 0x5555_5555_5555_5555
            return v
        }
        return spread(x) | spread(y) << 1
    }

    /// A level with at least this many items finds neighbours on several threads.
    static var parallelLevelSize: Int { 16_384 }

    /// The neighbour lists of a level's items, found ahead of the greedy walk: the
    /// items are cut into `chunks` runs, each filled by one thread into its own
    /// growable buffer. Raw storage, freed by `deallocate`.
    private final class NeighbourLists: @unchecked Sendable {
        // @unchecked: `fill(chunk:)` for different chunks touches disjoint storage
        // (its own buffer and its own items' ranges), and the lists are read only
        // after every fill has returned (`concurrentPerform` waits for them).
        let items: Int
        let chunks: Int
        let chunkSize: Int
        /// Per item: its chunk buffer's start and end of its list.
        let start: UnsafeMutablePointer<Int32>
        let end: UnsafeMutablePointer<Int32>
        /// Per chunk: its buffer, capacity and count.
        let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Int32>?>

        init(items: Int, chunks: Int) {
            self.items = items
            self.chunks = chunks
            chunkSize = chunks > 0 ? (items + chunks - 1) / chunks : 0
            start = .allocate(capacity: chunks > 0 ? items : 0)
            end = .allocate(capacity: chunks > 0 ? items : 0)
            buffers = .allocate(capacity: chunks)
            buffers.initialize(repeating: nil, count: chunks)
        }

        /// Fills chunk `c`: `query(p, append)` must pass each neighbour of item `p` to `append`.
        func fill(chunk c: Int, _ query: (Int, (Int32) -> Void) -> Void) {
            var capacity = max(64, chunkSize * 3)
            var buffer = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
            var count = 0
            for p in c * chunkSize..<min(items, (c + 1) * chunkSize) {
                start[p] = Int32(count)
                query(p) { b in
                    if count == capacity {
                        let bigger = UnsafeMutablePointer<Int32>.allocate(capacity: capacity * 2)
                        bigger.moveInitialize(from: buffer, count: count)
                        buffer.deallocate()
                        buffer = bigger
                        capacity *= 2
                    }
                    buffer[count] = b
                    count += 1
                }
                end[p] = Int32(count)
            }
            buffers[c] = buffer
        }

        /// Calls `body` with each neighbour found for item `p`.
        @inline(__always)
        func forEach(item p: Int, _ body: (Int32) -> Void) {
            guard let buffer = buffers[p / chunkSize] else { return }
            for i in Int(start[p])..<Int(end[p]) { body(buffer[i]) }
        }

        func deallocate() {
            for c in 0..<chunks { buffers[c]?.deallocate() }
            buffers.deallocate()
            start.deallocate()
            end.deallocate()
        }
    }

    /// The mutable state of one build: the node rows (riders first, then clusters in
    /// the order they are formed), and the scratch the greedy passes need (parent
    /// links, visit marks, extents). Raw storage sized for the most nodes a build can
    /// make (2n), so pointers stay valid while rows are added; freed by `deallocate`.
    private struct Builder {
        let options: FleetClusterOptions
        let riders: Int
        /// Whether large levels may use a second thread.
        let parallel: Bool
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
        /// One KD-tree per level, `minZoom` first.
        var trees: [FleetKDTree] = []
        /// One margin per level, `minZoom` first.
        var margins: [Double] = []

        init(options: FleetClusterOptions, riders n: Int, parallel: Bool) {
            self.options = options
            self.parallel = parallel
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
        }

        mutating func addRider(_ p: GeoPoint, x px: Double, y py: Double, key k: UInt64, node i: Int) {
            x[i] = px
            y[i] = py
            west[i] = p.lon
            east[i] = p.lon
            south[i] = p.lat
            north[i] = p.lat
            count[i] = 1
            key[i] = k
            zoom[i] = Int8(options.maxZoom + 1)
            parent[i] = -1
            mark[i] = Int8.max
            extent[i] = 0
            nodes = max(nodes, i + 1)
        }

        /// A KD-tree over the centres of `items`.
        func makeTree(_ items: ContiguousArray<Int32>) -> FleetKDTree {
            FleetKDTree(ids: items, xs: UnsafePointer(x), ys: UnsafePointer(y), parallel: parallel)
        }

        /// Runs the greedy pass for every zoom from `maxZoom` down to `minZoom`,
        /// leaving one KD-tree and one margin per level.
        mutating func clusterAllLevels() {
            let levels = options.maxZoom + 2 - options.minZoom
            margins = Array(repeating: 0, count: levels)
            var items = ContiguousArray<Int32>(0..<Int32(riders))
            var tree = makeTree(items)
            var levelTrees = [FleetKDTree?](repeating: nil, count: levels)
            levelTrees[levels - 1] = tree
            let scratch = UnsafeMutablePointer<Int32>.allocate(capacity: max(1, riders))
            let stack = UnsafeMutablePointer<Int>.allocate(capacity: FleetKDTree.stackCapacity)
            defer {
                scratch.deallocate()
                stack.deallocate()
            }
            for z in stride(from: options.maxZoom, through: options.minZoom, by: -1) {
                let r = options.radius / (options.extent * pow(2, Double(z)))
                var next = ContiguousArray<Int32>()
                next.reserveCapacity(items.count)
                let (formed, margin) = clusterLevel(
                    zoom: z, radius: r, items: items, tree: tree,
                    into: &next, neighbours: scratch, stack: stack)
                if formed { tree = makeTree(next) }
                levelTrees[z - options.minZoom] = tree
                margins[z - options.minZoom] = margin
                items = next
            }
            trees = levelTrees.map { $0 ?? tree }
        }

        /// One greedy pass at zoom `z` over the items of level `z + 1`, in order; appends
        /// the items of level `z` to `next`. Returns whether any cluster was formed and
        /// the level's margin. `neighbours` holds at least `riders` entries.
        mutating func clusterLevel(
            zoom z: Int, radius r: Double, items: ContiguousArray<Int32>, tree: FleetKDTree,
            into next: inout ContiguousArray<Int32>,
            neighbours: UnsafeMutablePointer<Int32>, stack: UnsafeMutablePointer<Int>
        ) -> (formed: Bool, margin: Double) {
            let z8 = Int8(z)
            let minPoints = options.minPoints
            var formed = false
            var margin = 0.0
            let (x, y, count, mark, extent) = (self.x, self.y, self.count, self.mark, self.extent)
            // Large levels: find every item's neighbours first, on several threads (the
            // queries do not depend on the walk), then walk; small ones query as they go.
            let chunks = parallel && items.count >= FleetIndex.parallelLevelSize ? 4 : 0
            let lists = NeighbourLists(items: items.count, chunks: chunks)
            defer { lists.deallocate() }
            if chunks > 0 {
                items.withUnsafeBufferPointer { ip in
                    // The threads only read the items and positions; each fills its own chunk.
                    let shared = FleetUncheckedSendable((ip, UnsafePointer(self.x), UnsafePointer(self.y)))
                    DispatchQueue.concurrentPerform(iterations: chunks) { c in
                        let (ip, x, y) = shared.value
                        lists.fill(chunk: c) { p, append in
                            let a = Int(ip[p])
                            withUnsafeTemporaryAllocation(of: Int.self, capacity: FleetKDTree.stackCapacity) { st in
                                // swiftlint:disable:next force_unwrapping
                                tree.within(x[a], y[a], r, stack: st.baseAddress!, append)
                            }
                        }
                    }
                }
            }
            do {
                for (p, a32) in items.enumerated() {
                    let a = Int(a32)
                    if mark[a] <= z8 { continue }
                    mark[a] = z8
                    let ax = x[a], ay = y[a]
                    let ac = Int(count[a])
                    var numPoints = ac
                    var found = 0
                    let visit = { (b: Int32) in
                        if mark[Int(b)] > z8 {
                            neighbours[found] = b
                            found += 1
                            numPoints += Int(count[Int(b)])
                        }
                    }
                    if chunks > 0 {
                        lists.forEach(item: p, visit)
                    } else {
                        tree.within(ax, ay, r, stack: stack, visit)
                    }
                    if numPoints > ac && numPoints >= minPoints {
                        let c = formCluster(seed: a, neighbours: neighbours, found: found, numPoints: numPoints, zoom: z8)
                        next.append(Int32(c))
                        formed = true
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
            }
            return (formed, margin)
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
