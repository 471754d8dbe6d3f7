import Foundation
import Testing
@testable import TrackHubCore

/// Property tests for motion on real-road conditions (PROTOCOL 6.2, 6.6, 6.7): GPS gaps of any
/// length answered by fixes of any duration, replays sped up, backlogs, waypoints that do not
/// wait. Seeded SplitMix64, so every run is the same.
@Suite struct MotionPropertyTests {
    /// What one scenario produced, frames and segments both.
    struct Run {
        var frames: [TripFrame] = []
        var segments: [TripSegment] = []
        /// The catch-up limit from each hub time on (changes only when a fix is applied).
        var limits: [(t: Int64, mps: Double)] = []
        var trip: Trip
        var destination: GeoPoint

        /// The highest limit in force at some moment of (t0, t1].
        func limit(over t0: Int64, _ t1: Int64) -> Double {
            var best = limits.last { $0.t <= t0 }?.mps ?? .infinity
            for l in limits where l.t > t0 && l.t <= t1 { best = max(best, l.mps) }
            return best
        }
    }

    /// A gentle random road (turns of at most ±25°, so noisy fixes snap to the right stretch).
    static func road(_ rng: inout SplitMix64) -> Route {
        var pts = [Fixture.origin]
        var heading = rng.uniform(0, 360)
        for _ in 0..<Int(rng.uniform(20, 120)) {
            heading += rng.uniform(-25, 25)
            pts.append(Geodesy.destination(from: pts[pts.count - 1], bearingDeg: heading, distanceM: rng.uniform(30, 200)))
        }
        return try! Route(points: pts)
    }

    /// A courier drives the whole road at a steady speed with GPS noise, fixes 1–4 s apart,
    /// now and then a gap of 2–120 s after which the fix asks for any duration (none, 0,
    /// 200 ms, or up to 60 s); the hub receives them at the device's pace divided by a speed-up
    /// of 1, 4 or 10. Waypoints (none or a few) do not wait. Ticks every 100 ms of hub time.
    static func run(seed: UInt64) -> Run {
        var rng = SplitMix64(seed: seed)
        let route = road(&rng)
        let speedup = [1.0, 1, 4, 10][Int(rng.uniform(0, 4))]
        let mps = rng.uniform(5, 35)
        let waypoints = (0..<Int(rng.uniform(0, 4))).map { _ in route.point(atDistance: rng.uniform(0.1, 0.9) * route.lengthM) }
            .sorted { route.nearest(to: $0).alongM < route.nearest(to: $1).alongM }
        var trip = try! Trip(
            id: "m\(seed)", route: route, waypoints: waypoints, destination: nil,
            config: TripConfig(waitAtWaypoints: false), now: Fixture.t0)
        _ = trip.created(now: Fixture.t0)
        var run = Run(trip: trip, destination: route.end)
        let hub = { (ts: Int64) -> Int64 in Fixture.t0 + Int64((Double(ts - Fixture.t0) / speedup).rounded()) }
        var ts = Fixture.t0
        var truth = 0.0
        var seq: Int64 = 0
        var now = Fixture.t0
        let endOfDrive = Fixture.t0 + Int64(route.lengthM / mps * 1000) + 30_000
        while ts < endOfDrive {
            let gap = rng.uniform(0, 1) < 0.08 ? rng.uniform(2_000, 120_000) : rng.uniform(1_000, 4_000)
            ts += Int64(gap)
            truth = min(route.lengthM, truth + mps * gap / 1000)
            let duration: Double? = gap > 4_000 ? [nil, 0, 200, rng.uniform(0, 60_000)][Int(rng.uniform(0, 4))] : nil
            let p = Geodesy.destination(from: route.point(atDistance: truth), bearingDeg: rng.uniform(0, 360), distanceM: rng.uniform(0, 8))
            seq += 1
            let fix = FixInput(lat: p.lat, lon: p.lon, ts: ts, seq: seq, durationMs: duration, speedMps: rng.uniform(0, 1) < 0.5 ? mps : nil)
            let arrives = hub(ts)
            while now + 100 <= arrives { now += 100; tick(&trip, &run, now) }
            if trip.judge(fix) == .applied {
                if let s = trip.apply(fix, now: arrives).segment { run.segments.append(s) }
                run.limits.append((arrives, trip.catchUpLimitMps()))
            }
        }
        for _ in 0..<3000 { now += 100; tick(&trip, &run, now) }
        run.trip = trip
        return run
    }

    static func tick(_ trip: inout Trip, _ run: inout Run, _ now: Int64) {
        if let f = trip.tick(now: now).frame { run.frames.append(f) }
    }

    @Test(arguments: 1...60 as ClosedRange<UInt64>)
    func noSlideFasterThanTheLimitAndEveryTripArrivesAtItsDestination(seed: UInt64) {
        let r = Self.run(seed: seed)
        // Frames: consecutive frames no farther apart than the limit allows, unless a jump.
        for (a, b) in zip(r.frames, r.frames.dropFirst()) where !b.jump {
            let limit = r.limit(over: a.t, b.t)
            guard limit.isFinite else { continue }
            let moved = Geodesy.distanceM(a.position, b.position)
            let allowed = limit * Double(b.t - a.t) / 1000 * 1.001 + 0.01
            #expect(moved <= allowed, "seed \(seed): \(moved) m in \(b.t - a.t) ms at \(b.t), limit \(limit) m/s")
        }
        // Segments: the same for each one's own path and duration; a jump is a one-point
        // segment of duration 0.
        for (i, s) in r.segments.enumerated() where i > 0 {
            if s.jump {
                #expect(s.durationMs == 0 && s.path.count == 1, "seed \(seed)")
                continue
            }
            let length = zip(s.path, s.path.dropFirst()).map { Geodesy.distanceM($0, $1) }.reduce(0, +)
            let limit = r.limit(over: s.t0 - 1, s.t0)
            guard limit.isFinite else { continue }
            #expect(length <= limit * Double(s.durationMs) / 1000 * 1.001 + 0.01, "seed \(seed): segment \(i) \(length) m in \(s.durationMs) ms")
        }
        // Only frames that follow a jump say so.
        #expect(r.frames.filter(\.jump).count <= r.segments.filter(\.jump).count, "seed \(seed)")
        // The courier drove the whole road: the trip arrived, its last frame at the destination.
        #expect(r.trip.status == .arrived, "seed \(seed): \(r.trip.status)")
        #expect(r.trip.leg == r.trip.waypoints.count, "seed \(seed)")
        if let last = r.frames.last {
            #expect(Geodesy.distanceM(last.position, r.destination) < 1e-6, "seed \(seed): \(Geodesy.distanceM(last.position, r.destination)) m short")
            #expect(last.progress == 1 && last.remainingM == 0 && last.etaS == 0 && last.status == .arrived, "seed \(seed): \(last)")
        }
        // Progress never goes down on this forward drive.
        let progress = r.frames.compactMap(\.progress)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 <= $1 + 1e-9 }, "seed \(seed)")
    }

    /// The scenarios do reach the rule: some gaps end in jumps, some in slides the limit slowed.
    @Test func scenariosContainJumpsAndSlowedSlides() {
        var jumps = 0, slowed = 0
        for seed in 1...60 as ClosedRange<UInt64> {
            let r = Self.run(seed: seed)
            jumps += r.segments.filter(\.jump).count
            for (i, s) in r.segments.enumerated() where i > 0 && !s.jump && s.durationMs > 0 {
                let length = zip(s.path, s.path.dropFirst()).map { Geodesy.distanceM($0, $1) }.reduce(0, +)
                let limit = r.limit(over: s.t0 - 1, s.t0)
                // Within a millisecond of the limit's own time: the limit set this duration.
                if limit.isFinite, Double(s.durationMs) - 1 <= length / limit * 1000, length > 1 { slowed += 1 }
            }
        }
        #expect(jumps > 0 && slowed > 0, "jumps \(jumps), slowed \(slowed)")
    }

    /// A courier's whole backlog at once (every fix in one millisecond of hub time), past
    /// waypoints that do not wait: the marker carries on to the last fix and arrives.
    @Test(arguments: 1...30 as ClosedRange<UInt64>)
    func anyBurstPastNonWaitingWaypointsArrives(seed: UInt64) {
        var rng = SplitMix64(seed: seed &+ 1000)
        let route = Self.road(&rng)
        let waypoints = (0..<Int(rng.uniform(1, 6))).map { _ in route.point(atDistance: rng.uniform(0.05, 0.95) * route.lengthM) }
            .sorted { route.nearest(to: $0).alongM < route.nearest(to: $1).alongM }
        var trip = try! Trip(
            id: "b\(seed)", route: route, waypoints: waypoints, destination: nil,
            config: TripConfig(waitAtWaypoints: false), now: Fixture.t0)
        _ = trip.created(now: Fixture.t0)
        let burstAt = Fixture.t0 + Int64(rng.uniform(0, 5))
        let step = rng.uniform(20, 150)
        var events: [TripEvent] = []
        var frames: [TripFrame] = []
        var along = 0.0
        var i: Int64 = 0
        while along < route.lengthM {
            along = min(route.lengthM, along + step)
            i += 1
            let p = route.point(atDistance: along)
            let fix = FixInput(lat: p.lat, lon: p.lon, ts: Fixture.t0 + i * 3000, seq: i)
            #expect(trip.judge(fix) == .applied)
            events += trip.apply(fix, now: burstAt + Int64(rng.uniform(0, 1))).events
        }
        var now = burstAt
        while now < burstAt + 600_000 && trip.wantsTick {
            now += 100
            let r = trip.tick(now: now)
            if let f = r.frame { frames.append(f) }
            events += r.events
        }
        #expect(trip.status == .arrived, "seed \(seed)")
        let reached = events.compactMap { e -> Int? in if case .waypointReached(let index, _) = e.kind { return index } else { return nil } }
        #expect(reached == Array(0..<waypoints.count), "seed \(seed): \(events.map(\.kind.name))")
        #expect(events.last?.kind == .arrived)
        #expect(Geodesy.distanceM(frames.last!.position, route.end) < 1e-6 && frames.last!.progress == 1, "seed \(seed)")
    }
}
