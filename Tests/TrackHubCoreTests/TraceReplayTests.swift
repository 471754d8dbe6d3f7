import Foundation
import Testing
@testable import TrackHubCore

/// What a replay produced.
struct ReplayResult {
    var verdicts: [FixVerdict] = []
    var events: [TripEvent] = []
    var frames: [TripFrame] = []
    var trip: Trip
    var applied: Int { verdicts.filter { $0 == .applied }.count }
}

/// Replays a trace in real time (hub clock = fix time), ticking at 10 Hz.
func replay(_ fixes: [SampleData.Fix], route: Route?, config: TripConfig = TripConfig()) throws -> ReplayResult {
    var trip = try Trip(id: "replay", route: route, waypoints: [], destination: nil, config: config, now: fixes[0].ts)
    var result = ReplayResult(trip: trip)
    result.events.append(trip.created(now: fixes[0].ts))
    var now = fixes[0].ts
    for (i, f) in fixes.enumerated() {
        while now + 100 <= f.ts {
            now += 100
            let r = trip.tick(now: now)
            if let fr = r.frame { result.frames.append(fr) }
            result.events += r.events
        }
        now = max(now, f.ts)
        let fix = FixInput(lat: f.point.lat, lon: f.point.lon, ts: f.ts, seq: Int64(i))
        let v = trip.judge(fix)
        result.verdicts.append(v)
        if v == .applied { result.events += trip.apply(fix, now: now).events }
    }
    for _ in 0..<100 {  // let the last animation finish
        now += 100
        let r = trip.tick(now: now)
        if let fr = r.frame { result.frames.append(fr) }
        result.events += r.events
    }
    result.trip = trip
    return result
}

/// The five I-95 motorway traces along their planned routes (data/samples/routes_i95.geojson).
/// Their fixes are not in the repository (unknown licence: data/samples/README.md); the test
/// command fetches them from PyPI, and only a `swift test` run before it ever ran skips these.
@Suite(.enabled(if: SampleData.hasI95Fixes,
    "no I-95 fixes in .build/test-data/: scripts/install-deps.sh --test fetches them (mapmatching4gmns 0.3.0 on PyPI)"))
struct I95TraceReplayTests {
    static let i95 = ["i95_2bd302da9400692a", "i95_39f0065e877ddec9", "i95_49e7842e713a1d85", "i95_4b36c42d34009c72", "i95_cccaf19acf908f42"]

    @Test func theFixesAreTheFetchedFile() throws {
        // 467 fixes in 5 journeys (the package's SOURCE.md), each journey one route's trip.
        let traces = try SampleData.i95Traces()
        #expect(traces.keys.sorted() == Self.i95)
        #expect(traces.values.reduce(0) { $0 + $1.count } == 467)
    }

    @Test func i95TracesFollowTheirPlannedRoutes() throws {
        let traces = try SampleData.i95Traces(), routes = try SampleData.i95Routes()
        for id in Self.i95 {
            let fixes = try #require(traces[id]), route = try #require(routes[id])
            let r = try replay(fixes, route: route)
            // Clean motorway traces: every fix is applied until the trip arrives.
            let refusals = r.verdicts.compactMap(\.refusal)
            #expect(refusals.allSatisfy { $0 == .arrived }, "\(id): \(refusals)")
            #expect(r.applied >= min(60, fixes.count), "\(id): \(r.applied)/\(fixes.count) applied")
            // Progress on the route never goes down.
            var last = -1.0
            for f in r.frames where f.status == .moving {
                if let p = f.progress {
                    #expect(p >= last - 1e-9, "\(id): progress \(last) → \(p)")
                    last = p
                }
            }
            let names = r.events.map(\.kind.name)
            switch id {
            case "i95_49e7842e713a1d85":
                // The trace (1.85 km) stops half-way along its 3.46 km route.
                #expect(r.trip.status == .moving && last > 0.55 && last < 0.6, "\(id): \(last)")
            case "i95_4b36c42d34009c72":
                // Starts 367 m from the route (before the mapped network), then joins it; the
                // trace ends 61 m before the route's end: more than arrival_buffer_m.
                #expect(Array(names.prefix(3)) == ["trip_created", "off_route", "back_on_route"], "\(id): \(names)")
                #expect(last > 0.99 && r.trip.status == .moving, "\(id): \(last)")
            default:
                // 2bd302da arrives at the route's end too: the route ends where the car leaves
                // the motorway, and the marker comes within 50 m of it one fix before.
                #expect(names.contains("arrived"), "\(id): \(names), progress \(last)")
                #expect(r.trip.status == .arrived)
            }
        }
    }

    @Test func i95TraceLeavingMotorwayGoesOffRouteWhereItLeaves() throws {
        let id = "i95_2bd302da9400692a"
        let fixes = try #require(try SampleData.i95Traces()[id]), route = try #require(try SampleData.i95Routes()[id])
        // A tight arrival buffer (5 m): the last motorway fix stays 12 m short of the route's end,
        // so the trip is still moving when the car takes the exit.
        let r = try replay(fixes, route: route, config: TripConfig(arrivalBufferM: 5))
        let off = try #require(r.events.first { $0.kind.name == "off_route" })
        // The dataset's notes on this route: fixes 63–133 are off it; the exit ramp passes 100 m at fix 64.
        #expect(off.t >= fixes[62].ts && off.t <= fixes[66].ts)
        #expect(r.trip.status == .offRoute)
        #expect(!r.events.contains { $0.kind.name == "back_on_route" || $0.kind.name == "arrived" })
        // done_m keeps its last on-route value.
        let info = r.trip.progressInfo(at: fixes[133].ts)
        #expect(info.progress! > 0.9)
        #expect(r.verdicts.allSatisfy { $0 == .applied })
    }

}

/// Replays of real Mopsi tracks (data/samples/fixtures/mopsi_tracks.csv) without a route.
struct TraceReplayTests {
    @Test func mopsiGlitchJumpsAreOutliers() throws {
        let traces = try SampleData.mopsiTraces()
        let mopsi = traces.keys.sorted()
        // The 22 tracks make_samples.py keeps (data/samples/README.md): all of them were read.
        #expect(mopsi.count == 22 && mopsi.allSatisfy { $0.hasPrefix("mopsi_") })
        var outliers = 0
        for id in mopsi {
            let fixes = try #require(traces[id])
            let r = try replay(fixes, route: nil)
            // Glitchy tracks lose up to ~15 % as outliers (bursts of jumps); the rest are applied.
            #expect(Double(r.applied) >= 0.8 * Double(fixes.count), "\(id): \(r.applied)/\(fixes.count)")
            // Between consecutive applied fixes, no implied speed above max_speed_mps.
            var prev: SampleData.Fix?
            for (f, v) in zip(fixes, r.verdicts) where v == .applied {
                if let p = prev {
                    #expect(Geodesy.distanceM(p.point, f.point) / (Double(f.ts - p.ts) / 1000) <= 70)
                }
                prev = f
            }
            outliers += r.verdicts.filter { $0 == .refused(.outlier) }.count
        }
        // Most of these tracks have glitch jumps, up to ~5 000 km/h in mopsi_1334219048061
        // (data/samples/README.md): they are refused.
        #expect(outliers > 0)
        let glitchy = try replay(try #require(traces["mopsi_1334219048061"]), route: nil)
        #expect(glitchy.verdicts.contains(.refused(.outlier)))
    }
}
