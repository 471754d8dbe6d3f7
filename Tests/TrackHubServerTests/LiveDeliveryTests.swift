import Foundation
import Testing
import TrackHubProtocol
@testable import TrackHubServer
import TrackHubTesting

/// Live delivery to subscribers (PROTOCOL sections 3, 4, 6.2, 6.3 and 7): subscriptions
/// before a trip exists, re-subscribing, identical bytes for every subscriber, frame and
/// segment numbering, segments mode, and a marker that never jumps.
@Suite struct LiveDeliveryTests {
    @Test func subscribingBeforeATripExistsGetsTripCreatedThenASnapshotThenLiveFrames() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            let viewer = try clients.connect()
            let unknown = try viewer.subscribe("early-bird", id: 1)
            #expect(unknown["status"] as? String == "unknown")
            try hub.createLisbonTrip("early-bird")
            let stream = try viewer.collect("the new snapshot") { $0.type == "snapshot" }
            let events = stream.filter { $0.type == "event" }
            #expect(events.map(\.name) == ["trip_created"])
            #expect(events.first?.int("n") == 1)
            let snapshot = try #require(stream.last)
            #expect(snapshot["status"] as? String == "pending")
            #expect(snapshot["re"] == nil, "a pushed snapshot answers nothing")
            #expect(snapshot.int("last_event") == 1)
            var courier = Courier(trip: "early-bird")
            let courierConnection = try clients.connect()
            try courierConnection.sendFix(courier.fix(alongM: 150), id: 2)
            let frame = try viewer.nextFrame(atLat: Lisbon.lat(alongM: 150))
            #expect(frame.int("seq") == 1)
        }
    }

    @Test func subscribingTwiceAnswersAFreshSnapshotAndNeverDuplicatesFrames() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("twice")
            let viewer = try clients.connect()
            try viewer.subscribe("twice", id: 1)
            var courier = Courier(trip: "twice")
            try viewer.sendFix(courier.fix(alongM: 100), id: 2)
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 100))
            let again = try viewer.subscribe("twice", id: 3)
            #expect(again.int("re") == 3)
            let position = try #require(again["position"] as? [String: Any])
            #expect(abs(position.double("lat")! - Lisbon.lat(alongM: 100)) < 1e-6)
            try viewer.sendFix(courier.fix(alongM: 300, durationMs: 1500), id: 4)
            let frames = try viewer.collect("the frame at the target") {
                $0.type == "frame" && abs(($0.double("lat") ?? 0) - Lisbon.lat(alongM: 300)) < 1e-6
            }.filter { $0.type == "frame" }
            let seqs = frames.compactMap { $0.int("seq") }
            #expect(seqs.count > 2)
            #expect(Set(seqs).count == seqs.count, "a frame came twice: \(seqs)")
            #expect(seqs == seqs.sorted())
            // An off_route event is delivered once, not once per subscribe.
            try viewer.sendFix(courier.fix(alongM: 300, eastM: 400), id: 5)
            try viewer.next(type: "event") { $0.name == "off_route" }
            #expect(try viewer.request(["op": "ping"], id: 6).type == "pong")
            #expect(viewer.drain().filter { $0.type == "event" }.isEmpty)
        }
    }

    @Test func subscribingAgainTakesTheNewMode() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("mode-switch")
            let viewer = try clients.connect()
            try viewer.subscribe("mode-switch", id: 1)
            var courier = Courier(trip: "mode-switch")
            try viewer.sendFix(courier.fix(alongM: 100), id: 2)
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 100))
            try viewer.subscribe("mode-switch", id: 3, ["mode": "segments"])
            _ = viewer.drain()
            try viewer.sendFix(courier.fix(alongM: 300, durationMs: 1000), id: 4)
            let segment = try viewer.next(type: "segment")
            #expect(segment.int("duration_ms") == 1000)
            // Past the end of that animation: a frames subscriber would have had its last frame.
            let witness = try clients.connect()
            try witness.subscribe("mode-switch", id: 1)
            try viewer.sendFix(courier.fix(alongM: 350, durationMs: 200), id: 5)
            try witness.nextFrame(atLat: Lisbon.lat(alongM: 350))
            #expect(try viewer.request(["op": "ping"], id: 6).type == "pong")
            let stray = viewer.drain().filter { $0.type == "frame" }
            #expect(stray.isEmpty, "frames after switching to segments: \(stray.count)")
        }
    }

    @Test func twoSubscribersReceiveByteIdenticalFrames() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("shared")
            let a = try clients.connect()
            let b = try clients.connect()
            try a.subscribe("shared", id: 1)
            try b.subscribe("shared", id: 1)
            var courier = Courier(trip: "shared")
            try a.sendFix(courier.fix(alongM: 100), id: 2)
            try a.sendFix(courier.fix(alongM: 250, durationMs: 600), id: 3)
            let last = try a.nextFrame(atLat: Lisbon.lat(alongM: 250))
            let lastSeq = try #require(last.int("seq"))
            try b.nextFrame(atLat: Lisbon.lat(alongM: 250))
            // A third joins late: every numbered frame has the same bytes for all of them.
            var compared = 0
            let c = try clients.connect()
            try c.subscribe("shared", id: 1)
            try a.sendFix(courier.fix(alongM: 400, durationMs: 600), id: 4)
            for seq in (lastSeq + 1)... {
                let rawA = try a.nextRaw(type: "frame") { $0.int("seq") == seq }
                let rawB = try b.nextRaw(type: "frame") { $0.int("seq") == seq }
                let rawC = try c.nextRaw(type: "frame") { $0.int("seq") == seq }
                #expect(rawA == rawB)
                #expect(rawA == rawC)
                compared += 1
                let lat = try #require(ServerMessage(rawA).double("lat"))
                if abs(lat - Lisbon.lat(alongM: 400)) < 1e-6 { break }
            }
            #expect(compared > 2)
        }
    }

    @Test func framesSeqRisesByOnePerFrameFromOne() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("numbered")
            let viewer = try clients.connect()
            try viewer.subscribe("numbered", id: 1)
            var courier = Courier(trip: "numbered")
            try viewer.sendFix(courier.fix(alongM: 50), id: 2)
            try viewer.sendFix(courier.fix(alongM: 200, durationMs: 1000), id: 3)
            let frames = try viewer.collect("the frame at the target") {
                $0.type == "frame" && abs(($0.double("lat") ?? 0) - Lisbon.lat(alongM: 200)) < 1e-6
            }.filter { $0.type == "frame" }
            let seqs = frames.compactMap { $0.int("seq") }
            #expect(seqs.first == 1)
            #expect(seqs == Array(1...(seqs.count)), "frames \(seqs)")
            #expect(seqs.count >= 3, "a one-second animation at 10 Hz is several frames")
            // Progress never goes down along the way.
            let done = frames.compactMap { $0.double("done_m") }
            #expect(done == done.sorted())
        }
    }

    @Test func segmentsModeSendsOneSegmentPerAnimationWithPathT0AndDuration() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("segmented", points: 41)
            let viewer = try clients.connect()
            try viewer.subscribe("segmented", id: 1, ["mode": "segments"])
            var courier = Courier(trip: "segmented")
            let before = nowMillis()
            try viewer.sendFix(courier.fix(alongM: 100, durationMs: 4000), id: 2)
            let placed = try viewer.next(type: "segment")
            #expect(placed.int("seq") == 1)
            #expect(placed.int("duration_ms") == 0, "the first fix places the marker at once")
            #expect((placed["path"] as? [[Double]])?.count == 1)
            try viewer.sendFix(courier.fix(alongM: 400, durationMs: 2000), id: 3)
            let segment = try viewer.next(type: "segment")
            #expect(segment["trip"] as? String == "segmented")
            #expect(segment.int("seq") == 2)
            #expect(segment.int("duration_ms") == 2000)
            let t0 = try #require(segment["t0"] as? Int64)
            #expect(t0 >= before - 1000 && t0 <= nowMillis() + 1000)
            let path = try #require(segment["path"] as? [[Double]])
            #expect(path.count >= 2)
            #expect(abs(path.first![1] - Lisbon.lat(alongM: 100)) < 1e-6, "from the marker")
            #expect(abs(path.last![1] - Lisbon.lat(alongM: 400)) < 1e-6, "to the target")
            #expect(path.allSatisfy { abs($0[0] - Lisbon.lon) < 1e-9 }, "along the route's own geometry")
            #expect(abs(segment.double("progress_from")! - 100 / Lisbon.lengthM) < 1e-3)
            #expect(abs(segment.double("progress_to")! - 400 / Lisbon.lengthM) < 1e-3)
            #expect(abs(segment.double("done_m")! - 400) < 1)
            #expect(abs(segment.double("remaining_m")! - (Lisbon.lengthM - 400)) < 1)
            #expect(segment.int("leg") == 0)
            #expect(segment["status"] as? String == "moving")
            #expect(segment["eta_s"] != nil)
            // No frames in segments mode.
            #expect(try viewer.request(["op": "ping"], id: 4).type == "pong")
            #expect(viewer.drain().filter { $0.type == "frame" }.isEmpty)
        }
    }

    @Test func segmentsSubscriberJoiningMidAnimationGetsTheRestRightAfterItsSnapshot() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("mid-join")
            let first = try clients.connect()
            try first.subscribe("mid-join", id: 1, ["mode": "segments"])
            var courier = Courier(trip: "mid-join")
            try first.sendFix(courier.fix(alongM: 100), id: 2)
            try first.sendFix(courier.fix(alongM: 400, durationMs: 30_000), id: 3)
            let running = try first.next(type: "segment") { $0.int("duration_ms") == 30_000 }
            let startedAt = try #require(running["t0"] as? Int64)
            let endsAt = startedAt + 30_000
            // Let the hub's clock move past the animation's start (its pongs tell its time).
            var hubNow = startedAt
            for attempt in 0..<10_000 where hubNow < startedAt + 20 {
                hubNow = try first.request(["op": "ping"], id: 1000 + attempt)["t"] as! Int64
            }
            #expect(hubNow >= startedAt + 20)
            let late = try clients.connect()
            try late.send(["op": "subscribe", "trip": "mid-join", "mode": "segments", "id": 9])
            let snapshot = try late.next()
            #expect(snapshot.type == "snapshot")
            #expect(snapshot.int("re") == 9)
            let rest = try late.next()
            #expect(rest.type == "segment", "right after the snapshot: \(rest)")
            #expect(rest.int("seq") == running.int("seq"))
            let t0 = try #require(rest["t0"] as? Int64)
            #expect(t0 >= hubNow, "t0 is the time of joining")
            #expect(rest.int("duration_ms").map { t0 + Int64($0) } == endsAt, "the rest ends when the animation does")
            let path = try #require(rest["path"] as? [[Double]])
            #expect(abs(path.last![1] - Lisbon.lat(alongM: 400)) < 1e-6)
            #expect(path.first![1] > Lisbon.lat(alongM: 100) + 1e-7, "from where the marker is now, not where it started")
            // Its start is where the snapshot shows the marker.
            let position = try #require(snapshot["position"] as? [String: Any])
            #expect(abs(path.first![1] - position.double("lat")!) < 1e-4)
        }
    }

    @Test func aFixMidAnimationStartsFromTheCurrentMarkerWithoutAJump() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("no-jump")
            let viewer = try clients.connect()
            try viewer.subscribe("no-jump", id: 1)
            var courier = Courier(trip: "no-jump")
            try viewer.sendFix(courier.fix(alongM: 0), id: 2)
            // 200 m over 4 s: 50 m/s.
            try viewer.sendFix(courier.fix(alongM: 200, durationMs: 4000), id: 3)
            var frames = try viewer.collect("a frame a quarter of the way") {
                $0.type == "frame" && ($0.double("done_m") ?? 0) > 40
            }.filter { $0.type == "frame" }
            #expect(frames.last!.double("done_m")! < 190, "the fix must land mid-animation")
            // From wherever the marker is now to 400 m over 4 s: at most 90 m/s.
            try viewer.send(courier.fix(alongM: 400, durationMs: 4000))
            frames += try viewer.collect("the frame at 400 m") {
                $0.type == "frame" && abs(($0.double("lat") ?? 0) - Lisbon.lat(alongM: 400)) < 1e-6
            }.filter { $0.type == "frame" }
            let maxSpeed = 90.0
            for (a, b) in zip(frames, frames.dropFirst()) {
                let dt = Double((b["t"] as! Int64) - (a["t"] as! Int64)) / 1000
                let moved = distanceM(a, b)
                #expect(moved <= maxSpeed * dt + 1, "jumped \(moved) m in \(dt) s (seq \(a.int("seq")!) → \(b.int("seq")!))")
                #expect(b.double("done_m")! >= a.double("done_m")!)
            }
        }
    }
}
