import Foundation
import TrackHubCore

/// Nanoseconds since an arbitrary origin (monotonic).
@inline(__always) func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

enum CoreBench {
    static func randomRoute(_ rng: inout SplitMix64, points n: Int, origin: GeoPoint) -> Route {
        var pts = [origin]
        pts.reserveCapacity(n)
        var heading = rng.uniform(0...360)
        for _ in 1..<n {
            heading += rng.uniform(-30...30)
            pts.append(Geodesy.destination(from: pts[pts.count - 1], bearingDeg: heading, distanceM: rng.uniform(5...50)))
        }
        do { return try Route(points: pts) } catch { fatalError("bench route: \(error)") }
    }

    static func run() {
        print("trackhub-bench core")
        snapBench()
        tickAndFixBench()
    }

    static func snapBench() {
        var rng = SplitMix64(seed: 1)
        let t0 = nowNs()
        let route = randomRoute(&rng, points: 20_000, origin: GeoPoint(lat: 60.17, lon: 24.94))
        let buildMs = Double(nowNs() - t0) / 1e6
        let queries: [(GeoPoint, Double)] = (0..<100_000).map { _ in
            let base = route.point(atDistance: rng.uniform(0...route.lengthM))
            let p = Geodesy.destination(from: base, bearingDeg: rng.uniform(0...360), distanceM: rng.uniform(0...60))
            return (p, rng.uniform(0...route.lengthM))
        }
        var sink = 0.0
        // Warm up, then measure.
        for (p, ref) in queries.prefix(10_000) { sink += route.snap(p, accuracyM: 10, referenceAlongM: ref, jitterM: 30).alongM }
        let iterations = 5
        var start = nowNs()
        for _ in 0..<iterations {
            for (p, ref) in queries { sink += route.snap(p, accuracyM: 10, referenceAlongM: ref, jitterM: 30).alongM }
        }
        let snapNs = Double(nowNs() - start) / Double(iterations * queries.count)
        start = nowNs()
        for _ in 0..<iterations {
            for (p, _) in queries { sink += route.nearest(to: p).alongM }
        }
        let nearestNs = Double(nowNs() - start) / Double(iterations * queries.count)
        print(String(format: "route: 20000 points, %.1f km, index built in %.1f ms", route.lengthM / 1000, buildMs))
        print(String(format: "snap (6.1 candidates + in-order rule): %.0f ns per fix (%d fixes within 60 m of the route)", snapNs, iterations * queries.count))
        print(String(format: "nearest only: %.0f ns per query", nearestNs))
        if sink == 42 { print("") }
    }

    static func tickAndFixBench() {
        var rng = SplitMix64(seed: 2)
        let routes = (0..<20).map { i in randomRoute(&rng, points: 2_000, origin: GeoPoint(lat: 60 + Double(i) * 0.05, lon: 24.9)) }
        let tripCount = 10_000
        let start: Int64 = 1_700_000_000_000
        var trips: [Trip] = []
        trips.reserveCapacity(tripCount)
        var along = [Double](repeating: 0, count: tripCount)
        for i in 0..<tripCount {
            let route = routes[i % routes.count]
            guard var trip = try? Trip(id: "t\(i)", route: route, waypoints: [], destination: nil, config: TripConfig(), now: start) else { continue }
            _ = trip.created(now: start)
            along[i] = rng.uniform(0...route.lengthM * 0.3)
            trips.append(trip)
        }
        // Fix throughput: 10 rounds of one fix per trip, 3 s apart, judged then applied.
        var now = start
        var seq: Int64 = 0
        var fixNs: UInt64 = 0
        var fixes = 0
        for _ in 0..<10 {
            now += 3000
            seq += 1
            let batch: [FixInput] = trips.indices.map { i in
                along[i] += rng.uniform(20...60)
                let route = routes[i % routes.count]
                let p = Geodesy.destination(from: route.point(atDistance: along[i]), bearingDeg: rng.uniform(0...360), distanceM: rng.uniform(0...8))
                return FixInput(lat: p.lat, lon: p.lon, ts: now, seq: seq, durationMs: 60_000, accuracyM: 8)
            }
            let t = nowNs()
            for i in trips.indices {
                if trips[i].judge(batch[i]) == .applied { _ = trips[i].apply(batch[i], now: now) }
            }
            fixNs += nowNs() - t
            fixes += batch.count
        }
        let animating = trips.filter { $0.isAnimating(at: now) }.count
        // Ticks: every trip animating (60 s animations), 200 ticks 100 ms apart.
        var tickMs: [Double] = []
        var frames = 0
        for _ in 0..<200 {
            now += 100
            let t = nowNs()
            for i in trips.indices {
                let r = trips[i].tick(now: now)
                if r.frame != nil { frames += 1 }
            }
            tickMs.append(Double(nowNs() - t) / 1e6)
        }
        tickMs.sort()
        let median = tickMs[tickMs.count / 2], p99 = tickMs[Int(Double(tickMs.count) * 0.99) - 1]
        print(String(format: "fixes judged + applied: %.0f per second (%d fixes over %d trips, %.2f µs each)",
                     Double(fixes) / (Double(fixNs) / 1e9), fixes, trips.count, Double(fixNs) / Double(fixes) / 1e3))
        print(String(format: "tick, %d trips animating (%d frames): median %.2f ms, p99 %.2f ms, max %.2f ms per tick",
                     animating, frames, median, p99, tickMs[tickMs.count - 1]))
    }
}
