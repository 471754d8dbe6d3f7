import Foundation
import Testing
@testable import TrackHubCore

/// PROTOCOL 18: last fix and battery, stale, and the events `signal_lost`, `signal_back`
/// and `battery_low`, driven as the hub drives them (judge, note the stored fix, apply).
@Suite struct CourierSignalTests {
    static let rule = StaleRule(staleAfterMs: 15_000)

    /// A fix at `east` metres along the route, taken and arrived at `at` ms after t0: judged,
    /// noted if stored (not a duplicate), then applied if applicable. Returns the events
    /// the note caused (what goes out before the fix's segment).
    @discardableResult
    static func send(_ d: inout Driver, east: Double, at ms: Int64, battery: Double? = nil, seq: Int64? = nil) -> [TripEvent] {
        d.advance(to: Fixture.t0 + ms)
        d.seq += 1
        var fix = Fixture.fix(Fixture.at(east: east), ts: d.now, seq: seq ?? d.seq)
        fix.batteryPercent = battery
        let verdict = d.trip.judge(fix)
        var noted: [TripEvent] = []
        if verdict.refusal != .duplicate { noted = d.trip.noteStoredFix(fix, arrivedAt: d.now, now: d.now) }
        if verdict.isApplied {
            let r = d.trip.apply(fix, now: d.now)
            if let s = r.segment { d.segments.append(s) }
            d.events += r.events
        }
        d.events += noted
        return noted
    }

    /// A trip with fixes every `interval` ms from t0 (`count` of them, moving east 10 m each).
    static func courier(every interval: Int64, count: Int, trip: Trip = Fixture.trip()) -> Driver {
        var d = Driver(trip)
        for i in 0..<count { send(&d, east: Double(i) * 10, at: Int64(i) * interval) }
        return d
    }

    // MARK: Last fix and battery

    @Test func lastFixAndBatteryAreNullBeforeTheFirstFix() {
        let trip = Fixture.trip()
        #expect(trip.lastFixT == nil)
        #expect(trip.battery == nil)
        #expect(trip.isStale == false)
        #expect(trip.usualFixIntervalMs == 10_000)
    }

    @Test func lastFixIsTheArrivalOfTheLastStoredFixAppliedOrNot() {
        var d = Driver(Fixture.trip())
        Self.send(&d, east: 0, at: 0)
        #expect(d.trip.lastFixT == Fixture.t0)
        Self.send(&d, east: 10, at: 1000)
        // Out of order (refused, but stored): it arrived, so it is the last fix.
        d.advance(to: Fixture.t0 + 2000)
        let old = Fixture.fix(Fixture.at(east: 5), ts: Fixture.t0 + 500, seq: 99)
        #expect(d.trip.judge(old) == .refused(.outOfOrder))
        _ = d.trip.noteStoredFix(old, arrivedAt: d.now, now: d.now)
        #expect(d.trip.lastFixT == Fixture.t0 + 2000)
    }

    @Test func aDuplicateChangesNothing() {
        var d = Driver(Fixture.trip())
        Self.send(&d, east: 0, at: 0, battery: 50, seq: 1)
        Self.send(&d, east: 10, at: 3000, battery: 10, seq: 1)  // the same seq: a duplicate, not stored
        #expect(d.trip.lastFixT == Fixture.t0)
        #expect(d.trip.battery == 50)
        #expect(d.eventNames.isEmpty)
    }

    @Test func batteryIsTheLastReportedRoundedToTheNearestPercent() {
        var d = Driver(Fixture.trip())
        Self.send(&d, east: 0, at: 0, battery: 56.5)
        #expect(d.trip.battery == 57)
        Self.send(&d, east: 10, at: 1000)  // no battery: the last one stands
        #expect(d.trip.battery == 57)
        Self.send(&d, east: 20, at: 2000, battery: 43.4)
        #expect(d.trip.battery == 43)
    }

    // MARK: The usual interval

    @Test func usualIntervalIsTheMedianGapOfTheLastTenArrivals() {
        var signal = CourierSignal(firstArrival: 0)
        #expect(signal.usualIntervalMs == 10_000)  // fewer than 2 arrivals
        signal.arrivals = [0, 1000, 4000, 5000]  // gaps 1000, 3000, 1000: odd count, the middle
        #expect(signal.usualIntervalMs == 1000)
        signal.arrivals = [0, 1000, 4000, 5000, 9000]  // gaps 1000, 1000, 3000, 4000: the mean of the two middle
        #expect(signal.usualIntervalMs == 2000)
        signal.arrivals = [0, 2000]
        #expect(signal.usualIntervalMs == 2000)
    }

    @Test func onlyTheLastTenArrivalsCount() {
        // Ten fixes 20 s apart, then ten 1 s apart: the usual interval is 1 s.
        var d = Self.courier(every: 20_000, count: 10)
        let start: Int64 = 200_000
        for i in 0..<10 { Self.send(&d, east: 100 + Double(i) * 10, at: start + Int64(i) * 1000) }
        #expect(d.trip.usualFixIntervalMs == 1000)
        #expect(d.trip.signal?.arrivals.count == 10)
    }

    // MARK: Stale

    @Test func thresholdIsTheLargestOfUsualAskedAndFloor() {
        let slow = Self.courier(every: 8000, count: 5).trip
        #expect(slow.staleThresholdMs(Self.rule) == 24_000)  // 3 × 8 s beats 15 s
        #expect(slow.staleThresholdMs(Self.rule, longestAskedIntervalMs: 30_000) == 60_000)  // 2 × 30 s
        let fast = Self.courier(every: 1000, count: 5).trip
        #expect(fast.staleThresholdMs(Self.rule) == 15_000)  // the floor
        #expect(fast.staleThresholdMs(StaleRule(staleAfterMs: 1000)) == 3000)  // 3 × 1 s
    }

    @Test func fastCourierIsStaleAfterItsThresholdOnce() {
        var d = Self.courier(every: 1000, count: 5)  // last fix at +4 s
        let last = Fixture.t0 + 4000
        #expect(d.trip.signalLost(now: last + 14_999, rule: Self.rule) == nil)
        #expect(d.trip.isStale == false)
        let lost = d.trip.signalLost(now: last + 15_000, rule: Self.rule)
        #expect(lost?.kind == .signalLost(lastFixT: last, battery: nil))
        #expect(lost?.n == d.trip.lastEventNumber)
        #expect(d.trip.isStale)
        // One silence, one signal_lost.
        #expect(d.trip.signalLost(now: last + 60_000, rule: Self.rule) == nil)
        #expect(d.trip.earliestStaleAt(Self.rule) == nil)
    }

    @Test func slowCourierIsStaleAfterThreeUsualIntervals() {
        var d = Self.courier(every: 8000, count: 5)  // last fix at +32 s, usual 8 s
        let last = Fixture.t0 + 32_000
        #expect(d.trip.signalLost(now: last + 23_999, rule: Self.rule) == nil)
        #expect(d.trip.signalLost(now: last + 24_000, rule: Self.rule) != nil)
    }

    @Test func anAskedIntervalPutsStaleOff() {
        var d = Self.courier(every: 1000, count: 5)
        let last = Fixture.t0 + 4000
        // The hub asked for a fix every 30 s: 15 s of silence is the courier doing as told.
        #expect(d.trip.signalLost(now: last + 59_999, rule: Self.rule, longestAskedIntervalMs: 30_000) == nil)
        #expect(d.trip.signalLost(now: last + 60_000, rule: Self.rule, longestAskedIntervalMs: 30_000) != nil)
    }

    @Test func signalBackComesWithTheNextStoredFixWithTheGap() {
        var d = Self.courier(every: 1000, count: 5)
        let last = Fixture.t0 + 4000
        _ = d.trip.signalLost(now: last + 15_000, rule: Self.rule)
        let noted = Self.send(&d, east: 60, at: 4000 + 20_000)
        #expect(noted.map(\.kind) == [.signalBack(gapMs: 20_000)])
        #expect(d.trip.isStale == false)
        // Its number comes before the fix's own events: it goes out first.
        #expect(noted.first?.n == d.trip.lastEventNumber)
        // The next silence is a new one.
        #expect(d.trip.earliestStaleAt(Self.rule) != nil)
        #expect(Self.send(&d, east: 70, at: 25_000).isEmpty)
    }

    @Test func neverStaleWhilePending() {
        var trip = Fixture.trip()
        // A fix noted on a trip that never moved (its fixes refused, say): still pending.
        let fix = Fixture.fix(Fixture.at(east: 0), ts: Fixture.t0, seq: 1)
        _ = trip.noteStoredFix(fix, arrivedAt: Fixture.t0, now: Fixture.t0)
        #expect(trip.status == .pending)
        #expect(trip.signalLost(now: Fixture.t0 + 3_600_000, rule: Self.rule) == nil)
        #expect(trip.isStale == false)
    }

    @Test func neverStaleOnceArrived() {
        var d = Driver(Fixture.trip(route: Fixture.eastRoute(lengthM: 200)))
        Self.send(&d, east: 0, at: 0)
        Self.send(&d, east: 200, at: 5000)
        d.advance(by: 15_000)
        #expect(d.trip.status == .arrived)
        #expect(d.trip.signalLost(now: d.now + 3_600_000, rule: Self.rule) == nil)
        #expect(d.trip.isStale == false)
    }

    @Test func neverStaleOnceEnded_andNoSignalBackAfterEndingWhileStale() {
        var d = Self.courier(every: 1000, count: 3)
        _ = d.trip.signalLost(now: Fixture.t0 + 20_000, rule: Self.rule)
        #expect(d.trip.isStale)
        _ = d.trip.end(now: Fixture.t0 + 21_000)
        #expect(d.trip.isStale == false)  // ended: never stale
        #expect(Self.send(&d, east: 50, at: 22_000, battery: 5).isEmpty)  // no signal_back, no battery_low
        #expect(d.trip.lastFixT == Fixture.t0 + 22_000)  // still noted
        #expect(d.trip.signalLost(now: Fixture.t0 + 3_600_000, rule: Self.rule) == nil)
    }

    @Test func holdingWaitsTenTimesTheFloor() {
        // A waypoint at 100 m that waits: the courier stands at the door.
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 100)]))
        Self.send(&d, east: 0, at: 0)
        Self.send(&d, east: 100, at: 5000)
        d.advance(by: 12_000)
        #expect(d.trip.status == .holding)
        let last = Fixture.t0 + 5000
        #expect(d.trip.staleThresholdMs(Self.rule) == 150_000)
        #expect(d.trip.signalLost(now: last + 149_999, rule: Self.rule) == nil)
        #expect(d.trip.signalLost(now: last + 150_000, rule: Self.rule) != nil)
    }

    @Test func earliestStaleAtNeverComesAfterTheRealMoment() {
        // Whatever the status and the asked interval, the watch's bound is not later than
        // the moment the trip is found stale.
        for interval: Int64 in [500, 1000, 4000, 20_000] {
            let trip = Self.courier(every: interval, count: 6).trip
            let bound = trip.earliestStaleAt(Self.rule)!
            for asked: Int64 in [0, 2000, 30_000] {
                #expect(bound <= trip.lastFixT! + trip.staleThresholdMs(Self.rule, longestAskedIntervalMs: asked))
            }
        }
    }

    // MARK: The cluster's decision

    @Test func aSilenceJudgedElsewhereIsReportedOnlyIfNoFixCameSince() {
        var d = Self.courier(every: 1000, count: 3)
        let judged = d.trip.lastFixT!
        var other = d.trip
        Self.send(&d, east: 40, at: 5000)  // a fix in between wins
        #expect(d.trip.signalLost(now: Fixture.t0 + 30_000, silenceSince: judged) == nil)
        let event = other.signalLost(now: Fixture.t0 + 30_000, silenceSince: judged)
        #expect(event?.kind == .signalLost(lastFixT: judged, battery: nil))
        #expect(other.signalLost(now: Fixture.t0 + 31_000, silenceSince: judged) == nil)  // asked twice: once
    }

    // MARK: Low battery

    @Test func batteryLowOnceThenAgainOnlyAfterMoreThanTwenty() {
        var d = Driver(Fixture.trip())
        var t: Int64 = 0
        func names(_ battery: Double) -> [String] {
            t += 1000
            return Self.send(&d, east: Double(t) / 100, at: t, battery: battery).map(\.kind.name)
        }
        #expect(names(40) == [])
        #expect(names(15) == ["battery_low"])
        #expect(names(10) == [])
        #expect(names(20) == [])  // not more than 20: still low
        #expect(names(14) == [])
        #expect(names(21) == [])  // re-armed
        #expect(names(15.4) == ["battery_low"])  // 15 after rounding
        #expect(d.events.last?.kind == .batteryLow(battery: 15))
        #expect(names(25) == [])
        #expect(names(15.6) == [])  // 16
    }

    @Test func signalBackComesBeforeBatteryLow() {
        var d = Self.courier(every: 1000, count: 3)
        _ = d.trip.signalLost(now: Fixture.t0 + 30_000, rule: Self.rule)
        let noted = Self.send(&d, east: 40, at: 31_000, battery: 9)
        #expect(noted.map(\.kind.name) == ["signal_back", "battery_low"])
        #expect(noted.map(\.n) == [noted[0].n, noted[0].n + 1])
    }

    // MARK: Restarts

    @Test func aRestartKeepsTheSignalAndNeverReportsOneSilenceTwice() throws {
        var d = Self.courier(every: 1000, count: 3)
        Self.send(&d, east: 40, at: 3000, battery: 12)
        _ = d.trip.signalLost(now: Fixture.t0 + 30_000, rule: Self.rule)
        var restored = try JSONDecoder().decode(Trip.self, from: JSONEncoder().encode(d.trip))
        #expect(restored.lastFixT == d.trip.lastFixT)
        #expect(restored.battery == 12)
        #expect(restored.isStale)
        #expect(restored.usualFixIntervalMs == d.trip.usualFixIntervalMs)
        #expect(restored.signalLost(now: Fixture.t0 + 90_000, rule: Self.rule) == nil)
        // battery_low was sent before the restart: not again for the next low fix.
        var back = d
        back.trip = restored
        #expect(Self.send(&back, east: 50, at: 91_000, battery: 11).map(\.kind.name) == ["signal_back"])
    }

    @Test func aStateStoredBeforeThisDecodesWithoutASignal() throws {
        let trip = Self.courier(every: 1000, count: 3).trip
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(trip)) as? [String: Any])
        object["signal"] = nil
        let old = try JSONDecoder().decode(Trip.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.lastFixT == nil)
        #expect(old.battery == nil)
        #expect(old.isStale == false)
    }
}
