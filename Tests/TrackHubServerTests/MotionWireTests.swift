import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Motion as subscribers see it on the wire (PROTOCOL 6.2 jumps, 6.3 one frame per trip per
/// tick, 6.7 the last frame and segment at the destination).
@Suite struct MotionWireTests {
    @Test func aJumpIsMarkedOnItsFrameAndSegmentOnly() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("leap")
            let frames = try clients.connect()
            try frames.subscribe("leap", id: 1)
            let segments = try clients.connect()
            try segments.subscribe("leap", id: 2, ["mode": "segments"])
            var courier = Courier(trip: "leap")
            // The device says it stands still (speed_mps 0), so the catch-up limit is its floor,
            // 5 m/s: 600 m asked for in 200 ms would take 120 s, far past 10 s more: a jump.
            var start = courier.fix(alongM: 100)
            start["speed_mps"] = 0
            try frames.sendFix(start, id: 3)
            try frames.nextFrame(atLat: Lisbon.lat(alongM: 100))
            var far = courier.fix(alongM: 700, durationMs: 200)
            far["speed_mps"] = 0
            try frames.sendFix(far, id: 4)

            let jumpFrame = try frames.nextFrame(atLat: Lisbon.lat(alongM: 700))
            #expect(jumpFrame["jump"] as? Bool == true)
            let segs = try segments.collect("the jump segment") { $0.type == "segment" && $0["jump"] != nil }
            let jump = try #require(segs.last)
            #expect(jump["jump"] as? Bool == true)
            #expect(jump.int("duration_ms") == 0)
            #expect((jump["path"] as? [[Double]])?.count == 1)
            #expect(segs.dropLast().allSatisfy { $0["jump"] == nil }, "only jump segments carry jump")

            // A slide afterwards carries no jump field at all.
            var next = courier.fix(alongM: 710, durationMs: 1000)
            next["speed_mps"] = 0
            try frames.sendFix(next, id: 5)
            let slide = try frames.nextFrame(atLat: Lisbon.lat(alongM: 710))
            #expect(slide["jump"] == nil)
            let slideSegment = try segments.next(type: "segment")
            #expect(slideSegment["jump"] == nil)
        }
    }

    @Test func aFixRightAfterAFrameDoesNotBringASecondFrameWithinTheTick() throws {
        try withTestHub(configure: { $0.tickHz = 10 }) { hub, clients in
            try hub.createLisbonTrip("steady")
            let viewer = try clients.connect()
            try viewer.subscribe("steady", id: 1)
            var courier = Courier(trip: "steady")
            try viewer.sendFix(courier.fix(alongM: 0), id: 2)
            var times: [Int64] = []
            // Each fix lands just after a frame of the moving trip: the worst case for a second
            // frame a sub-tick later.
            for i in 1...15 {
                try viewer.sendFix(courier.fix(alongM: Double(i) * 20, durationMs: 3000), id: 2 + i)
                let frame = try viewer.next(type: "frame")
                times.append(Int64(number(frame["t"]) ?? 0))
            }
            times += try (0..<5).map { _ in
                let frame = try viewer.next(type: "frame")
                return Int64(number(frame["t"]) ?? 0)
            }
            // A moving trip keeps its phase of the tick, so its frames are a whole tick apart
            // (the timer cannot fire a phase again in less than half of one: LWSServerHost).
            let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
            #expect(gaps.allSatisfy { $0 >= 50 }, "frame gaps \(gaps) ms at 10 Hz")
            // Fixes that land just after the trip's frame wait most of a tick for the next one:
            // the trip moved towards where they land (TickSchedule.follow), and /metrics says so.
            let metrics = String(decoding: try hub.http("GET", "/metrics").body, as: UTF8.self)
            #expect((metricValue(metrics, "trackhub_tick_phase_moves_total") ?? 0) >= 1)
        }
    }

    @Test func theLastFrameAndSegmentOfAnArrivedTripAreAtTheDestination() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createTrip(["id": "door", "route": TripSemanticsTests.shortRoute])
            let frames = try clients.connect()
            try frames.subscribe("door", id: 1)
            let segments = try clients.connect()
            try segments.subscribe("door", id: 2, ["mode": "segments"])
            var courier = Courier(trip: "door")
            try frames.sendFix(courier.fix(alongM: 0), id: 3)
            // 30 m short of the end: within arrival_buffer_m (50), so it arrives there...
            try frames.sendFix(courier.fix(alongM: TripSemanticsTests.shortLengthM - 30, durationMs: 500), id: 4)
            // ...and the marker goes on to the destination.
            let last = try frames.next(type: "frame") { number($0["progress"]) == 1 }
            #expect(abs(last.double("lat")! - 38.705) < 1e-9)
            #expect(number(last["remaining_m"]) == 0)
            #expect(last.int("eta_s") == 0)
            #expect(last["status"] as? String == "arrived")
            let arrived = try frames.next(type: "event") { $0.name == "arrived" }
            #expect(arrived.int("n") != nil)
            let segment = try segments.next(type: "segment") { $0["status"] as? String == "arrived" }
            let end = try #require((segment["path"] as? [[Double]])?.last)
            #expect(abs(end[1] - 38.705) < 1e-9)
            #expect(number(segment["progress_to"]) == 1 && segment.int("eta_s") == 0)
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/door")
            #expect(trip["status"] as? String == "arrived")
        }
    }
}

/// A JSON number as a Double, whether it was written with a fraction or not.
private func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }
