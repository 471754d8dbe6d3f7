import Foundation
import Testing

@testable import TrackHubCore

/// The invariants of PROTOCOL section 8 on real positions: Helsinki POIs and the
/// fixes of the shared GPS traces. Skipped (with this reason) when the shared data
/// directory is absent: set TRACKHUB_SHARED_DATA to it.
@Suite(.enabled(if: fleetSharedDataDirectory() != nil,
    "shared data not found: set TRACKHUB_SHARED_DATA to the directory holding points_helsinki_pois.csv"))
struct FleetRealDataTests {
    @Test func helsinkiPOIsAreCountedExactlyOnceAtEveryZoom() throws {
        let dir = try #require(fleetSharedDataDirectory())
        let members = readFleetCSV(dir.appendingPathComponent("points_helsinki_pois.csv"), idColumn: 0, latColumn: 1, lonColumn: 2)
        #expect(members.count > 1_000)
        checkFleet(members, seed: 42, boxesPerZoom: 10)
    }

    @Test func gpsTraceFixesAreCountedExactlyOnceAtEveryZoom() throws {
        let dir = try #require(fleetSharedDataDirectory())
        let members = readFleetCSV(dir.appendingPathComponent("gps_traces.csv"), idColumn: 0, latColumn: 2, lonColumn: 3)
        #expect(members.count > 5_000)
        checkFleet(members, seed: 43, boxesPerZoom: 6)
    }
}
