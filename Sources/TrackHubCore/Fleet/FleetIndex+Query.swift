extension FleetIndex {
    /// A latitude at or beyond this (the Web Mercator limit, as callers clamp to it)
    /// stands for the pole, so riders beyond the mercator square are still seen.
    static let mercatorEdgeLatitude = 85.05112877

    /// The items to show in a viewport at `zoom` (PROTOCOL section 8).
    ///
    /// An item is returned when its bounds (a single rider: its position) intersect the
    /// box, so every rider inside the box is counted in exactly one item, and the whole
    /// world adds up to `total`. Degrees throughout; `west > east` crosses the
    /// antimeridian (the union of `[west, 180]` and `[-180, east]`, each item once).
    /// A `south` or `north` at the mercator limit (±85.05112878) reaches to the pole.
    /// Zooms below `minZoom` use `minZoom`; zooms above `maxZoom` show every rider
    /// alone. Cost: about the size of the answer. Order: deterministic, unsorted
    /// (see `truncate(_:maxItems:)`).
    public func clusters(west: Double, south: Double, east: Double, north: Double, zoom: Int) -> [FleetItem] {
        var out: [FleetItem] = []
        forEachNode(west: west, south: south, east: east, north: north, zoom: zoom) { node in
            out.append(item(node: Int(node)))
        }
        return out
    }

    /// The trip ids of the riders an item of `clusters` stands for (a single rider's
    /// item: its own id), or `nil` when the cluster is not one of this index's.
    /// Cost: O(log n + count).
    public func memberIDs(of item: FleetItem) -> [String]? {
        guard item.count > 1 else { return item.count == 1 ? [item.id] : nil }
        guard let key = FleetClusterID.parse(item.id), let expansion = item.expansionZoom,
            expansion - 1 >= options.minZoom, expansion - 1 <= options.maxZoom
        else { return nil }
        let grid = grids[expansion - 1 - options.minZoom]
        let cx = FleetMercator.x(lon: item.lon), cy = FleetMercator.y(lat: item.lat)
        let eps = 1e-9
        var found = -1
        grid.forEachInCells(minX: cx - eps, minY: cy - eps, maxX: cx + eps, maxY: cy + eps) { node in
            let c = Int(node) - total
            if c >= 0 && clusterKey[c] == key && Int(clusterCount[c]) == item.count { found = Int(node) }
        }
        return found < 0 ? nil : memberIDs(node: found)
    }

    /// The trip ids of the riders of the cluster with this id, or `nil` when no
    /// cluster of the index has it. Cost: O(number of clusters + count).
    public func memberIDs(ofClusterID id: String) -> [String]? {
        guard let key = FleetClusterID.parse(id) else { return nil }
        for c in 0..<clusterKey.count where clusterKey[c] == key {
            return memberIDs(node: total + c)
        }
        return nil
    }

    /// Orders `items` the way a `clusters` message sends them: highest counts first,
    /// ties by id (bytewise), at most `maxItems` of them; `truncated` says whether
    /// any were left out.
    /// Sorts positions, not items: an item is over a hundred bytes with references, and
    /// moving items through the sort had been most of a city viewport's ordering time.
    public static func truncate(_ items: [FleetItem], maxItems: Int) -> (items: [FleetItem], truncated: Bool) {
        var order = ContiguousArray<Int32>(0..<Int32(items.count))
        items.withUnsafeBufferPointer { items in
            order.sort { i, j in
                let ca = items[Int(i)].count, cb = items[Int(j)].count
                if ca != cb { return ca > cb }
                return FleetItem.idPrecedes(items[Int(i)], items[Int(j)])
            }
        }
        let limit = max(0, maxItems)
        var out: [FleetItem] = []
        out.reserveCapacity(min(limit, items.count))
        for i in order.prefix(limit) { out.append(items[Int(i)]) }
        return (out, items.count > limit)
    }

    // MARK: - Internals

    /// Calls `body` with every node of the level for `zoom` whose bounds intersect
    /// the box, each once.
    func forEachNode(
        west: Double, south: Double, east: Double, north: Double, zoom: Int,
        _ body: (Int32) -> Void
    ) {
        guard total > 0, west.isFinite, south.isFinite, east.isFinite, north.isFinite, south <= north
        else { return }
        let grid = grids[level(forZoom: zoom)]
        let margin = margins[level(forZoom: zoom)] + 1e-9
        let s = south <= -Self.mercatorEdgeLatitude ? -90 : south
        let n = north >= Self.mercatorEdgeLatitude ? 90 : north
        let minY = FleetMercator.y(lat: n) - margin
        let maxY = FleetMercator.y(lat: s) + margin
        let riders = total
        /// Whether node `i`'s bounds (a rider: its position) meet `[w, e] × [s, n]`.
        func hits(_ i: Int, _ w: Double, _ e: Double) -> Bool {
            if i < riders {
                let p = members[Int(memberOrder[i])].position
                return p.lon <= e && p.lon >= w && p.lat <= n && p.lat >= s
            }
            let c = i - riders
            return clusterWest[c] <= e && clusterEast[c] >= w && clusterSouth[c] <= n && clusterNorth[c] >= s
        }
        if west <= east {
            grid.forEachInCells(
                minX: FleetMercator.x(lon: west) - margin, minY: minY,
                maxX: FleetMercator.x(lon: east) + margin, maxY: maxY
            ) { node in
                if hits(Int(node), west, east) { body(node) }
            }
        } else {
            // [west, 180] then [-180, east]; the second skips what the first sent.
            grid.forEachInCells(
                minX: FleetMercator.x(lon: west) - margin, minY: minY,
                maxX: 1 + margin, maxY: maxY
            ) { node in
                if hits(Int(node), west, 180) { body(node) }
            }
            grid.forEachInCells(
                minX: -margin, minY: minY,
                maxX: FleetMercator.x(lon: east) + margin, maxY: maxY
            ) { node in
                let i = Int(node)
                if hits(i, -180, east) && !hits(i, west, 180) { body(node) }
            }
        }
    }

    /// The wire item of a node.
    func item(node: Int) -> FleetItem {
        if node < total {
            let m = members[Int(memberOrder[node])]
            return FleetItem(
                identity: .named(m.id), lat: m.position.lat, lon: m.position.lon, count: 1,
                trip: m.id, status: m.status, bearing: m.bearing, stale: m.stale)
        }
        let c = node - total
        return FleetItem(
            identity: .cluster(key: clusterKey[c]),
            lat: FleetMercator.lat(y: clusterY[c]), lon: FleetMercator.lon(x: clusterX[c]),
            count: Int(clusterCount[c]),
            extent: FleetBounds(west: clusterWest[c], south: clusterSouth[c], east: clusterEast[c], north: clusterNorth[c]),
            expansionZoom: Int(clusterZoom[c]) + 1)
    }

    /// The rider nodes (canonical numbers, `< total`) of a node.
    func memberIndices(node: Int) -> ArraySlice<Int32> {
        if node < total { return [Int32(node)] }
        let start = Int(clusterLeafStart[node - total])
        return leafOrder[start..<start + Int(clusterCount[node - total])]
    }

    /// The trip ids of the members of a node.
    func memberIDs(node: Int) -> [String] {
        memberIndices(node: node).map { members[Int(memberOrder[Int($0)])].id }
    }
}
