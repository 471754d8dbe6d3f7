import Foundation
import Testing
@testable import TrackHubCore

/// `Trip.tickUnframed` (a trip whose followers all take segments) against `tick`: the same
/// events, the same frame numbering (a frame's status exactly when `tick` builds a frame) and
/// the same state afterwards, over seeded random trips with waypoints and an arrival.
@Suite struct TickUnframedTests {
    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func anUnframedTickChangesTheTripExactlyAsATickDoes(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let route = randomRoute(&rng, n: Int(rng.uniform(5, 80)))
        let waypoints = [route.point(atDistance: route.lengthM * 0.3), route.point(atDistance: route.lengthM * 0.6)]
        let destination = route.point(atDistance: route.lengthM)
        var framed = try Trip(id: "u\(seed)", route: route, waypoints: waypoints, destination: destination, config: TripConfig(waitAtWaypoints: false), now: Fixture.t0)
        _ = framed.created(now: Fixture.t0)
        var unframed = framed
        var now = Fixture.t0
        var courier = NoisyCourier(route: route, maxStepM: 80)
        var nextFixAt = now
        var frames = 0
        var eventNames: [String] = []
        while now < Fixture.t0 + 900_000 && framed.status != .arrived {
            if now >= nextFixAt {
                let fix = courier.nextFix(&rng, at: now)
                let verdict = framed.judge(fix)
                #expect(unframed.judge(fix) == verdict)
                if verdict == .applied {
                    _ = framed.apply(fix, now: now)
                    _ = unframed.apply(fix, now: now)
                }
                nextFixAt = now + Int64(rng.uniform(1000, 4000))
            }
            now += 100
            let a = framed.tick(now: now)
            let b = unframed.tickUnframed(now: now)
            #expect(b.framedStatus == a.frame?.status, "at \(now)")
            #expect(b.events == a.events, "at \(now)")
            if a.frame != nil { frames += 1 }
            eventNames += a.events.map(\.kind.name)
        }
        // The ticks after arrival (the marker going on to the destination) too.
        for _ in 0..<100 {
            now += 100
            let a = framed.tick(now: now)
            let b = unframed.tickUnframed(now: now)
            #expect(b.framedStatus == a.frame?.status)
            #expect(b.events == a.events)
        }
        #expect(frames > 10)
        #expect(eventNames.contains("arrived"), "seed \(seed): \(eventNames)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(try encoder.encode(framed) == encoder.encode(unframed))
    }
}
