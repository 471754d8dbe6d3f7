import Foundation
import Testing

@testable import TrackHubCore

/// The index against the definition of hierarchical greedy clustering, computed the slow
/// way: every pair of items compared at every zoom, no grid, no cells.
///
/// Both walk the riders in the canonical order and merge a cluster's members in walk
/// order, so every item must be the same to the last bit: id, count, centre, bounds and
/// expansion zoom. This is what makes the grid's neighbour search safe to change.
struct FleetReferenceTests {
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func everyLevelMatchesTheBruteForceClustering(seed: UInt64) {
        let members = denseFleet(seed: seed, size: 500)
        expectSameAsReference(members, options: .standard)
    }

    @Test func largerMinPointsMatchesTheBruteForceClustering() {
        // minPoints 3 leaves pairs unmerged, which reorders the next level's walk.
        let members = denseFleet(seed: 9, size: 400)
        expectSameAsReference(members, options: FleetClusterOptions(minPoints: 3))
    }

    @Test func ridersAcrossTheAntimeridianAndOnOneSpotMatch() {
        var members = makeFleet(seed: 5, size: 300, shape: .antimeridian)
        for k in 0..<20 {
            members.append(FleetMember(id: "same\(k)", position: GeoPoint(lat: 60.17, lon: 24.94), status: "moving", bearing: 0))
        }
        expectSameAsReference(members, options: .standard)
    }

    /// Riders within a few kilometres of two points, so clusters form at every zoom.
    private func denseFleet(seed: UInt64, size: Int) -> [FleetMember] {
        var rng = SplitMix64(seed: seed)
        return (0..<size).map { i in
            let (lat, lon) = i % 3 == 0 ? (60.17, 24.94) : (60.20, 25.00)
            let spread = i % 5 == 0 ? 0.0005 : 0.03
            return FleetMember(
                id: "d\(seed)-\(i)",
                position: GeoPoint(lat: lat + rng.standardNormal() * spread, lon: lon + rng.standardNormal() * spread * 2),
                status: "moving", bearing: 0)
        }
    }

    private func expectSameAsReference(_ members: [FleetMember], options: FleetClusterOptions, sourceLocation: SourceLocation = #_sourceLocation) {
        let index = FleetIndex.build(members: members, options: options)
        let levels = ReferenceClustering(members: members, options: options).levels
        for zoom in options.minZoom...(options.maxZoom + 1) {
            let expected = levels[zoom - options.minZoom].map(\.item).sorted { $0.id < $1.id }
            let got = index.clusters(west: -180, south: -90, east: 180, north: 90, zoom: zoom).sorted { $0.id < $1.id }
            // Report the first difference, not two whole levels.
            let firstDifference = zip(got, expected).first { $0 != $1 }.map { "\($0.0) ≠ \($0.1)" }
            #expect(
                got.count == expected.count && firstDifference == nil,
                "zoom \(zoom): \(got.count) items, the reference has \(expected.count); first difference: \(firstDifference ?? "none")",
                sourceLocation: sourceLocation)
        }
    }
}

/// Hierarchical greedy clustering by its definition (supercluster's `_cluster`), O(n²)
/// per zoom: for each item of the level above, in order, that no earlier item took, every
/// item within the radius that no earlier item took joins it, if they are at least
/// `minPoints` riders together.
private struct ReferenceClustering {
    struct Node {
        var x, y: Double
        var count: Int
        var key: UInt64
        var west, south, east, north: Double
        var zoom: Int
        var rider: FleetMember?

        var item: FleetItem {
            if let rider {
                return FleetItem(
                    id: rider.id, lat: rider.position.lat, lon: rider.position.lon, count: 1,
                    trip: rider.id, status: rider.status, bearing: rider.bearing, stale: rider.stale)
            }
            return FleetItem(
                id: FleetClusterID.render(key), lat: FleetMercator.lat(y: y), lon: FleetMercator.lon(x: x), count: count,
                bounds: [west, south, east, north], expansionZoom: zoom + 1)
        }
    }

    /// The items of each level, `minZoom` first, the riders alone last.
    var levels: [[Node]] = []

    init(members: [FleetMember], options: FleetClusterOptions) {
        let canonical = FleetIndex.canonicalOrder(members, reusing: nil)
        var items = canonical.order.indices.map { k in
            let m = members[Int(canonical.order[k])], facts = canonical.riders[k]
            return Node(
                x: facts.x, y: facts.y, count: 1, key: facts.hash,
                west: m.position.lon, south: m.position.lat, east: m.position.lon, north: m.position.lat,
                zoom: options.maxZoom + 1, rider: m)
        }
        var byLevel = [items]
        for z in stride(from: options.maxZoom, through: options.minZoom, by: -1) {
            let r = options.radius / (options.extent * pow(2, Double(z)))
            var taken = [Bool](repeating: false, count: items.count)
            var next: [Node] = []
            for a in items.indices where !taken[a] {
                taken[a] = true
                let seed = items[a]
                var neighbours: [Int] = []
                for b in items.indices where !taken[b] {
                    let dx = items[b].x - seed.x, dy = items[b].y - seed.y
                    if dx * dx + dy * dy <= r * r { neighbours.append(b) }
                }
                let numPoints = neighbours.reduce(seed.count) { $0 + items[$1].count }
                if numPoints > seed.count && numPoints >= options.minPoints {
                    var wx = seed.x * Double(seed.count), wy = seed.y * Double(seed.count)
                    var cluster = seed
                    cluster.rider = nil
                    cluster.zoom = z
                    cluster.count = numPoints
                    for b in neighbours {
                        taken[b] = true
                        let n = items[b]
                        wx += n.x * Double(n.count)
                        wy += n.y * Double(n.count)
                        cluster.west = min(cluster.west, n.west)
                        cluster.south = min(cluster.south, n.south)
                        cluster.east = max(cluster.east, n.east)
                        cluster.north = max(cluster.north, n.north)
                        cluster.key = cluster.key &+ n.key
                    }
                    cluster.x = wx / Double(numPoints)
                    cluster.y = wy / Double(numPoints)
                    next.append(cluster)
                } else {
                    next.append(seed)
                    if numPoints > 1 {
                        for b in neighbours {
                            taken[b] = true
                            next.append(items[b])
                        }
                    }
                }
            }
            items = next
            byLevel.append(items)
        }
        levels = byLevel.reversed()
    }
}
