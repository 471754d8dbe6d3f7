/// The fleet clustering index of PROTOCOL section 8: hierarchical greedy clustering
/// over Web Mercator, exactly as supercluster does it, answering viewports.
///
/// `build(members:)` projects every rider into the unit mercator square, then for each
/// zoom from `maxZoom` down to `minZoom` walks the items of the level above in order and
/// merges each unvisited item with the unvisited items within `radius / (extent · 2^z)`
/// of it (found with a grid of that level) into a cluster at their weighted centre.
/// Riders are walked in a canonical order (by ~38 m mercator cell, row by row, then by
/// the hash of their trip id), so the clustering, and with it every id, does not depend
/// on the order of the input, and the walk reads each grid in the order it is stored.
///
/// A cluster formed at zoom `z` is an item at `z` and below (until it is merged);
/// its `expansionZoom` is `z + 1` (at most `maxZoom + 1`), where its two or more
/// children are items. Its id is `#` and the hex of the wrapping sum of its members'
/// 64-bit FNV-1a hashes, so it depends on the member set only.
///
/// Storage is struct-of-arrays: nodes are numbered riders first (`members`), then the
/// clusters in the order they were formed (one row each); one grid of node numbers
/// per zoom level (`FleetGrid`).
/// The index is immutable and `Sendable`: build it once per fleet tick and read it
/// from any number of threads.
public final class FleetIndex: Sendable {
    /// The clustering parameters the index was built with.
    public let options: FleetClusterOptions
    /// The members the index was built from, as given (invalid positions included).
    let members: [FleetMember]
    /// The riders indexed, in canonical order: node `k < total` is `members[memberOrder[k]]`.
    let memberOrder: ContiguousArray<Int32>

    // One row per cluster: node `total + c` is row `c` (a rider's values are its
    // member's: position, count 1).
    /// Mercator x of each cluster's weighted centre.
    let clusterX: ContiguousArray<Double>
    /// Mercator y of each cluster's weighted centre.
    let clusterY: ContiguousArray<Double>
    /// Westmost member longitude of each cluster, degrees.
    let clusterWest: ContiguousArray<Double>
    /// Southmost member latitude of each cluster, degrees.
    let clusterSouth: ContiguousArray<Double>
    /// Eastmost member longitude of each cluster, degrees.
    let clusterEast: ContiguousArray<Double>
    /// Northmost member latitude of each cluster, degrees.
    let clusterNorth: ContiguousArray<Double>
    /// Number of riders of each cluster.
    let clusterCount: ContiguousArray<Int32>
    /// Order-independent key of each cluster's member set (sum of member hashes).
    let clusterKey: ContiguousArray<UInt64>
    /// The zoom at which each cluster was formed.
    let clusterZoom: ContiguousArray<Int8>
    /// Where each cluster's members start in `leafOrder`.
    let clusterLeafStart: ContiguousArray<Int32>
    /// Rider node numbers, ordered so that every node's members are contiguous.
    let leafOrder: ContiguousArray<Int32>

    // One entry per level, from `minZoom` to `maxZoom + 1`.
    /// The items of each level, grouped by the cell of their centre.
    let grids: [FleetGrid]
    /// How far (Chebyshev, mercator units) any member of a level's item can be from
    /// the item's centre, so that a box query grown by it finds every item whose
    /// bounds reach into the box.
    let margins: [Double]

    /// The number of riders in the index (members with a valid position).
    public var total: Int { memberOrder.count }

    /// The bytes of the index's arrays: the canonical order of the members (the members
    /// themselves are the caller's array, shared), the cluster rows and the grids.
    public var approximateBytes: (members: Int, clusters: Int, grids: Int) {
        let rows = clusterX.capacity * 8 * 6 + clusterCount.capacity * 4 + clusterKey.capacity * 8
            + clusterZoom.capacity + clusterLeafStart.capacity * 4 + leafOrder.capacity * 4
        return (memberOrder.capacity * 4, rows, grids.reduce(0) { $0 + $1.approximateBytes })
    }

    init(
        options: FleetClusterOptions, members: [FleetMember], memberOrder: ContiguousArray<Int32>,
        clusterX: ContiguousArray<Double>, clusterY: ContiguousArray<Double>,
        clusterWest: ContiguousArray<Double>, clusterSouth: ContiguousArray<Double>,
        clusterEast: ContiguousArray<Double>, clusterNorth: ContiguousArray<Double>,
        clusterCount: ContiguousArray<Int32>, clusterKey: ContiguousArray<UInt64>,
        clusterZoom: ContiguousArray<Int8>, clusterLeafStart: ContiguousArray<Int32>,
        leafOrder: ContiguousArray<Int32>, grids: [FleetGrid], margins: [Double]
    ) {
        self.options = options
        self.members = members
        self.memberOrder = memberOrder
        self.clusterX = clusterX
        self.clusterY = clusterY
        self.clusterWest = clusterWest
        self.clusterSouth = clusterSouth
        self.clusterEast = clusterEast
        self.clusterNorth = clusterNorth
        self.clusterCount = clusterCount
        self.clusterKey = clusterKey
        self.clusterZoom = clusterZoom
        self.clusterLeafStart = clusterLeafStart
        self.leafOrder = leafOrder
        self.grids = grids
        self.margins = margins
    }

    /// The level (index into `grids`) that answers queries at `zoom`.
    func level(forZoom zoom: Int) -> Int {
        min(max(zoom, options.minZoom), options.maxZoom + 1) - options.minZoom
    }
}
