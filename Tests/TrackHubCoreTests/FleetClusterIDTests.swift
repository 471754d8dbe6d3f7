import Testing

@testable import TrackHubCore

/// Cluster ids and the truncation order of PROTOCOL section 8.
@Suite struct FleetClusterIDTests {
    /// Every item at every zoom, by id, with its member set.
    func membership(_ index: FleetIndex) -> [Int: [String: Set<String>]] {
        var out: [Int: [String: Set<String>]] = [:]
        for zoom in 0...17 {
            for item in index.clusters(west: -180, south: -85.05112878, east: 180, north: 85.05112878, zoom: zoom) {
                out[zoom, default: [:]][item.id] = Set(index.memberIDs(of: item) ?? [])
            }
        }
        return out
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func idsAreStableAcrossRebuildsInAnyInputOrder(seed: UInt64) {
        for shape in FleetShape.allCases {
            let members = makeFleet(seed: seed, size: 1_500, shape: shape)
            var rng = SplitMix64(seed: seed)
            let a = FleetIndex.build(members: members)
            let b = FleetIndex.build(members: members.shuffled(using: &rng))
            let c = FleetIndex.build(members: members.reversed())
            for zoom in 0...17 {
                let world = [-180, -85.05112878, 180, 85.05112878]
                let qa = a.clusters(west: world[0], south: world[1], east: world[2], north: world[3], zoom: zoom)
                let qb = b.clusters(west: world[0], south: world[1], east: world[2], north: world[3], zoom: zoom)
                let qc = c.clusters(west: world[0], south: world[1], east: world[2], north: world[3], zoom: zoom)
                #expect(qa == qb && qa == qc, "zoom \(zoom)")
            }
        }
    }

    @Test(arguments: [UInt64(7), 8])
    func idChangesExactlyWhenMembershipChanges(seed: UInt64) {
        let members = makeFleet(seed: seed, size: 800, shape: .cities)
        var rng = SplitMix64(seed: seed)
        var changed = members
        changed.remove(at: Int(rng.next() % UInt64(changed.count)))
        changed.append(FleetMember(
            id: "newcomer", position: members[Int(rng.next() % UInt64(members.count))].position,
            status: "moving", bearing: 0))
        let before = membership(FleetIndex.build(members: members))
        let after = membership(FleetIndex.build(members: changed))
        var kept = 0
        var renamed = 0
        for zoom in 0...17 {
            let a = before[zoom] ?? [:], b = after[zoom] ?? [:]
            let idBySetA = Dictionary(a.map { ($0.value, $0.key) }, uniquingKeysWith: { x, _ in x })
            for (id, set) in b {
                if let old = a[id] { #expect(old == set, "id \(id) kept for a different member set") }
                if let oldID = idBySetA[set] {
                    #expect(oldID == id, "same members, new id \(id) (was \(oldID))")
                    kept += 1
                } else {
                    renamed += 1
                }
            }
        }
        #expect(kept > 0 && renamed > 0)
    }

    @Test func clusterIDsAreHashHexAndParseBack() {
        let key = FleetClusterID.memberHash("trip-1") &+ FleetClusterID.memberHash("trip-2")
        let id = FleetClusterID.render(key)
        #expect(id.count == 17 && id.hasPrefix("#"))
        #expect(FleetClusterID.parse(id) == key)
        #expect(FleetClusterID.parse("trip-1") == nil)
        #expect(FleetClusterID.render(0) == "#0000000000000000")
        // FNV-1a 64 of the empty string, finalised, is fixed forever.
        #expect(FleetClusterID.memberHash("") == FleetClusterID.memberHash(""))
        #expect(FleetClusterID.memberHash("ab") != FleetClusterID.memberHash("ba"))
    }

    @Test func memberIDsOfAClusterIDMatchTheItem() {
        let members = makeFleet(seed: 21, size: 400, shape: .cities)
        let index = FleetIndex.build(members: members)
        for item in index.clusters(west: -180, south: -85, east: 180, north: 85, zoom: 5) where item.count > 1 {
            #expect(index.memberIDs(ofClusterID: item.id).map(Set.init) == index.memberIDs(of: item).map(Set.init))
        }
        #expect(index.memberIDs(ofClusterID: "#0123456789abcdef") == nil)
    }

    @Test func truncationKeepsHighestCountsFirstThenIDsBytewise() {
        func item(_ id: String, _ count: Int) -> FleetItem { FleetItem(id: id, lat: 0, lon: 0, count: count) }
        let items = [item("b", 1), item("#ff", 5), item("a", 1), item("#0a", 5), item("B", 1), item("#zz", 9), item("_", 1)]
        let all = FleetIndex.truncate(items, maxItems: 100)
        #expect(all.items.map(\.id) == ["#zz", "#0a", "#ff", "B", "_", "a", "b"])
        #expect(all.truncated == false)
        let three = FleetIndex.truncate(items, maxItems: 3)
        #expect(three.items.map(\.id) == ["#zz", "#0a", "#ff"] && three.truncated)
        let exact = FleetIndex.truncate(items, maxItems: items.count)
        #expect(exact.items.count == items.count && !exact.truncated)
        let none = FleetIndex.truncate(items, maxItems: 0)
        #expect(none.items.isEmpty && none.truncated)
        let empty = FleetIndex.truncate([], maxItems: -1)
        #expect(empty.items.isEmpty && !empty.truncated)
    }
}
