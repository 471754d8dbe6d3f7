import Testing
@testable import TrackHubCore

/// `Trip.firstPossibleEventTime`: a trip that skips its ticks until a tick before that time
/// (as a hub alone does for a trip nobody takes frames of, `TickSchedule.doze`) finds the
/// same events at the same ticks, with the same times and positions, as one ticked every
/// time; and the skipped ticks would have found none.
@Suite struct DozingTickTests {
    @Test(arguments: 1...10 as ClosedRange<UInt64>, [false, true])
    func aTripThatSkipsTheTicksBeforeItsFirstPossibleEventFindsEveryEventAsATickedOne(seed: UInt64, waitAtWaypoints: Bool) throws {
        var rng = SplitMix64(seed: seed)
        let route = randomRoute(&rng, n: Int(rng.uniform(5, 80)))
        let waypoints = [route.point(atDistance: route.lengthM * 0.3), route.point(atDistance: route.lengthM * 0.6)]
        let destination = route.point(atDistance: route.lengthM)
        var ticked = try Trip(
            id: "z\(seed)", route: route, waypoints: waypoints, destination: destination,
            config: TripConfig(waitAtWaypoints: waitAtWaypoints), now: Fixture.t0)
        _ = ticked.created(now: Fixture.t0)
        var dozing = ticked
        let tickMs: Int64 = 100
        var now = Fixture.t0
        var courier = NoisyCourier(route: route, maxStepM: 120)
        var nextFixAt = now
        var asleepUntil: Int64?
        var skipped = 0, ticks = 0
        var names: [String] = []
        while now < Fixture.t0 + 900_000 && ticked.status != .arrived {
            if now >= nextFixAt {
                let fix = courier.nextFix(&rng, at: now)
                let verdict = ticked.judge(fix)
                #expect(dozing.judge(fix) == verdict)
                if verdict == .applied {
                    #expect(ticked.apply(fix, now: now).events == dozing.apply(fix, now: now).events)
                    asleepUntil = nil  // a fix wakes it
                }
                nextFixAt = now + Int64(rng.uniform(1000, 6000))
            }
            if ticked.status == .holding, Int(rng.uniform(0, 30)) == 0 {
                #expect(try ticked.proceed(now: now) == dozing.proceed(now: now))
                asleepUntil = nil  // so does a command
            }
            now += tickMs
            ticks += 1
            let expected = ticked.tick(now: now).events
            names += expected.map(\.kind.name)
            if let until = asleepUntil, now < until {
                skipped += 1
                #expect(expected.isEmpty, "seed \(seed): a skipped tick at \(now) would have found \(expected.map(\.kind.name))")
                continue
            }
            asleepUntil = nil
            let found = dozing.tickUnframed(now: now).events
            #expect(found == expected, "seed \(seed) at \(now)")
            if found.isEmpty, dozing.wantsTick, let first = dozing.firstPossibleEventTime, first - tickMs > now + tickMs {
                asleepUntil = first - tickMs
            }
        }
        #expect(names.contains("waypoint_reached"), "seed \(seed): \(names)")
        #expect(skipped > ticks / 10, "seed \(seed): only \(skipped) of \(ticks) ticks skipped")
        #expect(dozing.status == ticked.status && dozing.lastEventNumber == ticked.lastEventNumber)
    }

    @Test func thereIsNoFirstPossibleEventTimeOffTheRouteOrWhileHolding() throws {
        let route = Fixture.eastRoute(lengthM: 2000)
        var trip = try Trip(
            id: "h", route: route, waypoints: [route.point(atDistance: route.lengthM / 2)], destination: route.point(atDistance: route.lengthM),
            config: TripConfig(waitAtWaypoints: true), now: Fixture.t0)
        #expect(trip.firstPossibleEventTime == nil, "no animation yet")
        _ = trip.apply(FixInput(lat: route.points[0].lat, lon: route.points[0].lon, ts: Fixture.t0, seq: 1), now: Fixture.t0)
        _ = trip.tick(now: Fixture.t0 + 100)
        let far = route.point(atDistance: route.lengthM * 0.4)
        _ = trip.apply(FixInput(lat: far.lat, lon: far.lon, ts: Fixture.t0 + 10_000, seq: 2), now: Fixture.t0 + 200)
        #expect(trip.firstPossibleEventTime == nil, "a check is due after a fix")
        _ = trip.tick(now: Fixture.t0 + 300)
        let first = try #require(trip.firstPossibleEventTime, "along the route, short of the waypoint")
        #expect(first > Fixture.t0 + 300)
        let off = Geodesy.destination(from: far, bearingDeg: 90, distanceM: 500)
        _ = trip.apply(FixInput(lat: off.lat, lon: off.lon, ts: Fixture.t0 + 20_000, seq: 3), now: Fixture.t0 + 400)
        _ = trip.tick(now: Fixture.t0 + 500)
        #expect(trip.firstPossibleEventTime == nil, "off the route")
    }
}
