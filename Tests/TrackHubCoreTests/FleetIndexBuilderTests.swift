import Testing

@testable import TrackHubCore

/// `FleetIndexBuilder` reuses what unmoved riders left from its last build; every build
/// must still be exactly the index a build from nothing makes of the same members.
@Suite struct FleetIndexBuilderTests {
    /// Everything an index answers with, and the arrays the answers come from.
    func expectSameIndex(_ a: FleetIndex, _ b: FleetIndex, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.total == b.total, sourceLocation: sourceLocation)
        #expect(a.memberOrder == b.memberOrder, sourceLocation: sourceLocation)
        #expect(a.clusterKey == b.clusterKey, sourceLocation: sourceLocation)
        #expect(a.clusterX == b.clusterX && a.clusterY == b.clusterY, sourceLocation: sourceLocation)
        #expect(a.clusterCount == b.clusterCount && a.clusterZoom == b.clusterZoom, sourceLocation: sourceLocation)
        #expect(a.leafOrder == b.leafOrder && a.margins == b.margins, sourceLocation: sourceLocation)
        for zoom in 0...17 {
            let itemsA = a.clusters(west: -180, south: -85.06, east: 180, north: 85.06, zoom: zoom)
            let itemsB = b.clusters(west: -180, south: -85.06, east: 180, north: 85.06, zoom: zoom)
            #expect(itemsA == itemsB, "zoom \(zoom)", sourceLocation: sourceLocation)
        }
    }

    /// One tick of a fleet: a share of riders moves a little, a few are added, removed or
    /// lose their position, and now and then the list comes in a new order.
    func nextTick(_ members: inout [FleetMember], _ rng: inout SplitMix64, tick: Int, nextID: inout Int) {
        for k in members.indices where Double.random(in: 0...1, using: &rng) < 0.2 {
            let p = members[k].position
            members[k].position = GeoPoint(
                lat: min(max(p.lat + Double.random(in: -1...1, using: &rng) * 0.0005, -85), 85),
                lon: min(max(p.lon + Double.random(in: -1...1, using: &rng) * 0.0005, -180), 180))
        }
        for _ in 0..<Int(Double.random(in: 0...3, using: &rng)) where !members.isEmpty {  // removed
            members.remove(at: Int(Double.random(in: 0...Double(members.count - 1), using: &rng)))
        }
        for _ in 0..<Int(Double.random(in: 0...12, using: &rng)) {  // added, sometimes a burst in one place
            let at = Int(Double.random(in: 0...Double(members.count), using: &rng))
            let near = members.isEmpty ? GeoPoint(lat: 60.17, lon: 24.94) : members[min(at, members.count - 1)].position
            members.insert(
                FleetMember(id: "new-\(nextID)", position: near, status: "moving", bearing: 0), at: at)
            nextID += 1
        }
        if !members.isEmpty {  // one loses its position, and one gets it back
            let k = Int(Double.random(in: 0...Double(members.count - 1), using: &rng))
            members[k].position = GeoPoint(lat: .nan, lon: members[k].position.lon)
            let l = Int(Double.random(in: 0...Double(members.count - 1), using: &rng))
            if !members[l].position.isValid { members[l].position = GeoPoint(lat: 60.2, lon: 24.9) }
        }
        if tick % 5 == 4 { members.shuffle(using: &rng) }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func everyBuildIsTheIndexABuildFromNothingMakes(seed: UInt64) {
        for shape in FleetShape.allCases {
            var members = makeFleet(seed: seed &* 17, size: 3_000, shape: shape)
            var rng = SplitMix64(seed: seed)
            let builder = FleetIndexBuilder()
            var nextID = 0
            for tick in 0..<8 {
                let built = builder.build(members: members)
                expectSameIndex(built, FleetIndex.build(members: members))
                nextTick(&members, &rng, tick: tick, nextID: &nextID)
            }
        }
    }

    @Test func ridersSharingAPositionAndACellKeepTheirOrder() {
        // Equal sort keys are settled by hash and id: kept and new riders in one cell.
        var members = (0..<40).map { FleetMember(id: "r\($0)", position: GeoPoint(lat: 60.17, lon: 24.94), status: "moving", bearing: 0) }
        let builder = FleetIndexBuilder()
        expectSameIndex(builder.build(members: members), FleetIndex.build(members: members))
        members[3].position = GeoPoint(lat: 60.170_000_1, lon: 24.94)
        members.insert(FleetMember(id: "r40", position: GeoPoint(lat: 60.17, lon: 24.94), status: "moving", bearing: 0), at: 7)
        expectSameIndex(builder.build(members: members), FleetIndex.build(members: members))
    }

    @Test func buildsWithOtherOptionsUseThem() {
        let members = makeFleet(seed: 5, size: 1_000, shape: .cities)
        let options = FleetClusterOptions(radius: 80, minPoints: 3, maxZoom: 14)
        let builder = FleetIndexBuilder(options: options)
        _ = builder.build(members: members)
        expectSameIndex(builder.build(members: members), FleetIndex.build(members: members, options: options))
    }

    // MARK: - Matching riders with the last build's

    func member(_ id: String, _ lat: Double = 10) -> FleetMember {
        FleetMember(id: id, position: GeoPoint(lat: lat, lon: 20), status: "moving", bearing: 0)
    }

    @Test func unmovedRidersAreFoundAcrossAddedAndRemovedOnes() {
        let last = ["a", "b", "c", "d", "e", "f"].map { member($0) }
        // b removed, x and y added before d, e moved.
        let input = [member("a"), member("c"), member("x"), member("y"), member("d"), member("e", 11), member("f")]
        #expect(FleetIndex.unchangedSources(input, last) == [0, 2, -1, -1, 3, -1, 5])
    }

    @Test(arguments: [12, 300])
    func theListsMeetAgainAfterARunOfAddedRidersLongerThanTheWindow(added: Int) {
        let last = (0..<2_000).map { member("r\($0)") }
        var input = last
        input.insert(contentsOf: (0..<added).map { member("new\($0)") }, at: 5)
        let source = FleetIndex.unchangedSources(input, last, window: 8)
        for (i, j) in source.enumerated() where j >= 0 {
            #expect(input[i].id == last[Int(j)].id)
        }
        // Found again within twice the run's length (at least 64).
        let unmatched = source.filter { $0 < 0 }.count
        #expect(unmatched <= max(2 * added, 64))
        #expect(source.suffix(1_000).allSatisfy { $0 >= 0 })
    }

    @Test func aRunOfRemovedRidersIsSkipped() {
        let last = (0..<2_000).map { member("r\($0)") }
        var input = last
        input.removeSubrange(100..<400)
        let source = FleetIndex.unchangedSources(input, last, window: 8)
        for (i, j) in source.enumerated() where j >= 0 {
            #expect(input[i].id == last[Int(j)].id)
        }
        #expect(source.filter { $0 < 0 }.count <= 64)
    }

    @Test func aListInANewOrderMatchesOnlyWhatLinesUp() {
        let last = (0..<50).map { member("r\($0)") }
        let input = Array(last.reversed())
        let source = FleetIndex.unchangedSources(input, last)
        for (i, j) in source.enumerated() where j >= 0 {
            #expect(input[i].id == last[Int(j)].id)
        }
    }
}
