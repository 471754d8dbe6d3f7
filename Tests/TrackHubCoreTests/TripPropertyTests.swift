import Foundation
import Testing
@testable import TrackHubCore

/// Property tests over random routes and fix streams (seeded SplitMix64: deterministic).
@Suite struct TripPropertyTests {
    /// One seeded scenario: a random route, a courier moving along it with GPS noise, occasional
    /// small steps back and large jumps back; fixes every 1–5 s, ticks every 100 ms.
    func runScenario(seed: UInt64, check: (inout PropertyChecker) -> Void = { _ in }) -> PropertyChecker {
        var rng = SplitMix64(seed: seed)
        let route = randomRoute(&rng, n: Int(rng.uniform(5, 200)))
        var trip = try! Trip(id: "p\(seed)", route: route, waypoints: [], destination: nil, config: TripConfig(), now: Fixture.t0)
        _ = trip.created(now: Fixture.t0)
        var checker = PropertyChecker(route: route)
        var now = Fixture.t0
        var truth = rng.uniform(0, route.lengthM * 0.2)
        var seq: Int64 = 0
        var nextFixAt = now
        while now < Fixture.t0 + 600_000 && trip.status != .arrived {
            if now >= nextFixAt {
                let r = rng.uniform(0, 1)
                if r < 0.05 { truth -= rng.uniform(40, 150) } else if r < 0.15 { truth -= rng.uniform(0, 20) } else { truth += rng.uniform(0, 60) }
                truth = min(max(truth, 0), route.lengthM)
                let noise = rng.uniform(0, 15)
                let p = Geodesy.destination(from: route.point(atDistance: truth), bearingDeg: rng.uniform(0, 360), distanceM: noise)
                seq += 1
                let acc: Double? = rng.uniform(0, 1) < 0.5 ? rng.uniform(3, 20) : nil
                let fix = FixInput(lat: p.lat, lon: p.lon, ts: now, seq: seq, accuracyM: acc)
                let before = trip.marker(at: now)
                let oldAnimation = trip.animation
                if trip.judge(fix) == .applied {
                    _ = trip.apply(fix, now: now)
                    // No jump: the new animation starts where the marker is.
                    if let before { checker.expectEqual(trip.marker(at: now)!.position, before.position, "marker jumped on a new fix") }
                    if let a = trip.animation, a != oldAnimation { checker.newAnimation(a, trip: trip) }
                }
                nextFixAt = now + Int64(rng.uniform(1000, 5000))
            }
            now += 100
            let r = trip.tick(now: now)
            checker.sample(trip: trip, now: now, frame: r.frame)
        }
        check(&checker)
        return checker
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func markerStaysOnRouteMovesWithinSpeedAndProgressNeverDrops(seed: UInt64) {
        let c = runScenario(seed: seed)
        #expect(c.failures.isEmpty, "seed \(seed): \(c.failures.prefix(5))")
        #expect(c.samples > 100)
    }
}

/// Accumulates property violations while a scenario runs.
struct PropertyChecker {
    let route: Route
    var failures: [String] = []
    var samples = 0
    var previous: (t: Int64, position: GeoPoint)?
    var current: Animation?
    var lastDone: Double?
    var allowDecrease = false

    init(route: Route) { self.route = route }

    mutating func expectEqual(_ a: GeoPoint, _ b: GeoPoint, _ what: String) {
        if a != b { failures.append("\(what): \(a) vs \(b)") }
    }

    mutating func newAnimation(_ a: Animation, trip: Trip) {
        current = a
        previous = nil
        // The last sample of an animation equals its target exactly.
        let end = trip.marker(at: a.endT)!.position
        switch a.path {
        case .alongRoute(let from, let to):
            expectEqual(end, route.point(atDistance: to), "end of animation not at target")
            // Only a jump back of at least the jitter threshold (30 m at least) may run backwards.
            allowDecrease = to < from
            if to < from && from - to < 30 - 1e-9 { failures.append("small backward animation \(from) → \(to)") }
        case .straight(_, let to): expectEqual(end, to, "end of straight animation not at target")
        case .straightToRoute(_, let toM), .viaRoute(_, _, let toM):
            expectEqual(end, route.point(atDistance: toM), "end of way back not at target")
        }
    }

    mutating func sample(trip: Trip, now: Int64, frame: TripFrame?) {
        guard let s = trip.marker(at: now), let a = trip.animation else { return }
        samples += 1
        if trip.status == .moving, s.alongM != nil {
            let off = route.nearest(to: s.position).offsetM
            if off > 0.05 { failures.append("marker \(off) m off the route at \(now)") }
        }
        if let prev = previous, a == current {
            // Between two samples 100 ms apart, no farther than the animation's speed allows.
            let moved = Geodesy.distanceM(prev.position, s.position)
            let allowed = pathLength(a) / Double(max(a.durationMs, 1)) * Double(now - prev.t) * 1.001 + 1e-6
            if moved > allowed { failures.append("moved \(moved) m in \(now - prev.t) ms, allowed \(allowed)") }
        }
        previous = (now, s.position)
        if let f = frame, f.status == .moving, let done = f.doneM {
            if let last = lastDone, done < last - 1e-6, !allowDecrease {
                failures.append("progress went down \(last) → \(done) without a large jump back")
            }
            lastDone = done
        }
    }

    func pathLength(_ a: Animation) -> Double {
        switch a.path {
        case .alongRoute(let from, let to): return abs(to - from)
        case .straight(let from, let to): return Geodesy.distanceM(from, to)
        case .straightToRoute, .viaRoute: return Animator.length(a.path, route: route)
        }
    }
}
