import Foundation
import Testing

@testable import TrackHubCore

/// The invariants of PROTOCOL section 8 on real positions shipped in data/samples/fixtures
/// (SampleData): Helsinki POIs, and the fixes of real GPS traces.
struct FleetRealDataTests {
    @Test func helsinkiPOIsAreCountedExactlyOnceAtEveryZoom() throws {
        let members = readFleetCSV(SampleData.fixtures.appendingPathComponent("helsinki_pois.csv"), idColumn: 0, latColumn: 1, lonColumn: 2)
        #expect(members.count == 1_711)  // every row of the file
        checkFleet(members, seed: 42, boxesPerZoom: 10)
    }

    @Test func gpsTraceFixesAreCountedExactlyOnceAtEveryZoom() throws {
        // Two regions far apart (Joensuu, Finland and Višnjan, Croatia), so the low zooms
        // cluster across them: every Mopsi fix of the fixture, and the Višnjan drive.
        var members = readFleetCSV(SampleData.fixtures.appendingPathComponent("mopsi_tracks.csv"), idColumn: 0, latColumn: 2, lonColumn: 3)
        #expect(members.count == 1_852)
        members += try SampleData.visnjanPoints().enumerated().map { i, point in
            FleetMember(id: "visnjan_car-\(i)", position: point, status: "moving", bearing: 0)
        }
        #expect(members.count == 1_852 + 104)
        checkFleet(members, seed: 43, boxesPerZoom: 6)
    }
}
