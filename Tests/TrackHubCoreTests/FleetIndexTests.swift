import Testing

@testable import TrackHubCore

/// The invariants of PROTOCOL section 8 on synthetic fleets.
@Suite struct FleetIndexTests {
    @Test(arguments: [1, 2, 100, 5_000], [UInt64(1), 2, 3])
    func everyRiderInsideAViewportIsCountedExactlyOnce(size: Int, seed: UInt64) {
        for shape in FleetShape.allCases {
            let members = makeFleet(seed: seed &* 31 &+ UInt64(size), size: size, shape: shape)
            checkFleet(members, seed: seed, boxesPerZoom: size >= 5_000 ? 4 : 12)
        }
    }

    @Test func largerMinPointsStillCountsEveryRiderOnce() {
        let members = makeFleet(seed: 12, size: 1_200, shape: .cities)
        let index = FleetIndex.build(members: members, options: FleetClusterOptions(minPoints: 4))
        for zoom in 0...17 {
            let items = checkViewport(index, members, fleetWorld, zoom: zoom)
            #expect(items.reduce(0) { $0 + $1.item.count } == members.count)
            #expect(items.allSatisfy { $0.item.count == 1 || $0.item.count >= 4 })
        }
    }

    @Test func emptyFleetAnswersNothing() {
        let index = FleetIndex.build(members: [])
        #expect(index.total == 0)
        for zoom in 0...17 {
            #expect(index.clusters(west: -180, south: -85, east: 180, north: 85, zoom: zoom).isEmpty)
        }
    }

    @Test func ridersWithInvalidPositionsAreLeftOut() {
        let members = [
            FleetMember(id: "ok", position: GeoPoint(lat: 10, lon: 10), status: "moving", bearing: 0),
            FleetMember(id: "nan", position: GeoPoint(lat: .nan, lon: 10), status: "moving", bearing: 0),
            FleetMember(id: "far", position: GeoPoint(lat: 10, lon: 200), status: "moving", bearing: 0),
        ]
        let index = FleetIndex.build(members: members)
        #expect(index.total == 1)
        #expect(index.clusters(west: -180, south: -85, east: 180, north: 85, zoom: 0).map(\.id) == ["ok"])
    }

    @Test func twoRidersOnOneSpotClusterUpToMaxZoomAndSplitAbove() {
        let p = GeoPoint(lat: 60.17, lon: 24.94)
        let members = ["a", "b"].map { FleetMember(id: $0, position: p, status: "moving", bearing: 90) }
        let index = FleetIndex.build(members: members)
        for zoom in 0...16 {
            let items = index.clusters(west: 24, south: 60, east: 25, north: 61, zoom: zoom)
            #expect(items.count == 1 && items.first?.count == 2 && items.first?.expansionZoom == 17)
        }
        let leaves = index.clusters(west: 24, south: 60, east: 25, north: 61, zoom: 17)
        #expect(Set(leaves.map(\.id)) == ["a", "b"])
        #expect(index.clusters(west: 24, south: 60, east: 25, north: 61, zoom: 22).count == 2)
    }

    @Test func zoomsBelowZeroUseTheLowestLevel() {
        let members = makeFleet(seed: 9, size: 300, shape: .cities)
        let index = FleetIndex.build(members: members)
        #expect(index.clusters(west: -180, south: -85, east: 180, north: 85, zoom: -3)
            == index.clusters(west: -180, south: -85, east: 180, north: 85, zoom: 0))
    }

    @Test(arguments: [UInt64(4), 5, 6])
    func queryingAtExpansionZoomSplitsTheCluster(seed: UInt64) {
        for shape in FleetShape.allCases {
            let members = makeFleet(seed: seed, size: 600, shape: shape)
            let index = FleetIndex.build(members: members)
            for zoom in 0...16 {
                for cluster in index.clusters(west: -180, south: -85, east: 180, north: 85, zoom: zoom)
                where cluster.count > 1 {
                    guard let b = cluster.bounds, let e = cluster.expansionZoom,
                        let own = index.memberIDs(of: cluster).map(Set.init)
                    else {
                        Issue.record("cluster \(cluster.id) lacks bounds, expansion zoom or members")
                        continue
                    }
                    let parts = index.clusters(west: b[0], south: b[1], east: b[2], north: b[3], zoom: e)
                        .compactMap { index.memberIDs(of: $0) }
                        .filter { !own.isDisjoint(with: $0) }
                    #expect(parts.count >= 2, "\(cluster.id) at zoom \(zoom) does not split at \(e)")
                    #expect(parts.allSatisfy { Set($0).isSubset(of: own) })
                    #expect(parts.reduce(0) { $0 + $1.count } == own.count)
                    // One zoom below it does not split yet: it is still one item.
                    if e - 1 >= zoom {
                        let before = index.clusters(west: b[0], south: b[1], east: b[2], north: b[3], zoom: e - 1)
                        #expect(before.contains { $0.id == cluster.id })
                    }
                }
            }
        }
    }

    @Test func antimeridianViewportIsTheUnionOfBothSidesWithoutDuplicates() {
        let members = makeFleet(seed: 11, size: 2_000, shape: .antimeridian)
        let index = FleetIndex.build(members: members)
        for zoom in [0, 2, 4, 8, 12, 17] {
            let crossing = index.clusters(west: 170, south: -60, east: -170, north: 70, zoom: zoom)
            let east = index.clusters(west: 170, south: -60, east: 180, north: 70, zoom: zoom)
            let west = index.clusters(west: -180, south: -60, east: -170, north: 70, zoom: zoom)
            #expect(Set(crossing.map(\.id)) == Set(east.map(\.id)).union(west.map(\.id)))
            #expect(Set(crossing.map(\.id)).count == crossing.count)
            checkViewport(index, members, [170, -60, -170, 70], zoom: zoom)
        }
    }

    @Test func clusterReachingIntoBothSidesOfACrossingViewportIsSentOnce() {
        let members = [-12.0, 12.0].enumerated().map { i, lon in
            FleetMember(id: "r\(i)", position: GeoPoint(lat: 0, lon: lon), status: "moving", bearing: 0)
        }
        let index = FleetIndex.build(members: members)
        let items = index.clusters(west: 10, south: -10, east: -10, north: 10, zoom: 0)
        #expect(items.count == 1 && items.first?.count == 2)
        checkViewport(index, members, [10, -10, -10, 10], zoom: 0)
    }

    @Test func ridersBeyondTheMercatorLimitAreSeenAtTheEdge() {
        let members = [
            FleetMember(id: "north", position: GeoPoint(lat: 89.5, lon: 10), status: "moving", bearing: 0),
            FleetMember(id: "south", position: GeoPoint(lat: -90, lon: -10), status: "moving", bearing: 0),
            FleetMember(id: "mid", position: GeoPoint(lat: 0, lon: 0), status: "moving", bearing: 0),
        ]
        let index = FleetIndex.build(members: members)
        for zoom in 0...17 {
            let items = checkViewport(index, members, fleetWorld, zoom: zoom)
            #expect(items.reduce(0) { $0 + $1.item.count } == 3)
        }
        #expect(index.clusters(west: -180, south: 0, east: 180, north: 85, zoom: 17).map(\.id) == ["mid"])
    }
}
