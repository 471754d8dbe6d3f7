import Foundation
import Testing
import TrackHubLWS
import TrackHubSync
@testable import TrackHubServer
import TrackHubTesting

/// Fixes ahead of frames (Hub+Tick): a courier's message that arrives while a sub-tick's
/// frames are being written is read, judged and handed to the store before the rest of
/// them are written, and what every viewer receives is what it received before. On the
/// fake host, a peer's message "arrives" from inside a write (`onWrite`), exactly between
/// two of the sub-tick's writes; the order is read off the host's write log, no timing.
@Suite struct FixesAheadOfFramesTests {
    static let trips = 8
    static let viewersPerTrip = 20

    /// A hub with `trips` moving trips, all in one tick phase, `viewersPerTrip` frame
    /// subscribers each, and the clock moved on so the next sub-tick writes a frame to every
    /// viewer (trips × viewers writes, more than two slices of `SubTickRest`).
    struct Scene {
        let hub: SocketlessHub
        let courier: ConnectionID
        let viewers: [ConnectionID]
        let writesBefore: Int

        init() throws {
            hub = try SocketlessHub()
            courier = try #require(hub.host.openAndWait())
            var viewers: [ConnectionID] = []
            for t in 0..<FixesAheadOfFramesTests.trips {
                let route = (0..<21).map { i in [-9.14 + 0.01 * Double(t), 38.70 + 0.02 * Double(i) / 20] }
                #expect(try hub.http(.post, "/v1/trips", json: ["id": "t\(t)", "route": route]).status == 201)
                for _ in 0..<FixesAheadOfFramesTests.viewersPerTrip {
                    let viewer = try #require(hub.host.openAndWait())
                    hub.host.send(viewer, #"{"op":"subscribe","trip":"t\#(t)","id":1}"#)
                    viewers.append(viewer)
                }
            }
            for viewer in viewers {
                try hub.waitForMessage(viewer, "the snapshot") { $0["type"] as? String == "snapshot" }
            }
            // One fix per trip, acked before any timer fires: every trip joins the same phase.
            for t in 0..<FixesAheadOfFramesTests.trips {
                hub.host.send(courier, Self.fix(trip: t, seq: 1, lat: 38.705, ts: hub.clock.now - 10_000, id: 100 + t))
            }
            let courier = courier
            try waitUntil("every fix is acked") { [hub] in
                hub.messages(courier).filter { $0["type"] as? String == "ack" }.count == FixesAheadOfFramesTests.trips
            }
            hub.clock.advance(ms: 100)
            self.viewers = viewers
            writesBefore = hub.host.writeLog.count
        }

        static func fix(trip t: Int, seq: Int, lat: Double, ts: Int64, id: Int) -> String {
            #"{"op":"fix","id":\#(id),"trip":"t\#(t)","lat":\#(lat),"lon":\#(-9.14 + 0.01 * Double(t)),"ts":\#(ts),"seq":\#(seq),"duration_ms":1000}"#
        }

        /// The frames written since the scene was set up, with their place in the write log.
        func framesSinceSetUp() -> [(index: Int, id: ConnectionID, text: String)] {
            hub.host.writeLog.enumerated().dropFirst(writesBefore)
                .filter { $0.element.text.contains(#""type":"frame""#) }
                .map { ($0.offset, $0.element.id, $0.element.text) }
        }

        /// Fires the timer once; `duringFirstFrame` runs on the service thread right after the
        /// sub-tick's first frame is written, `afterLaterFrame` after each frame written after
        /// it. Returns once every viewer has this sub-tick's frame.
        func subTick(
            duringFirstFrame: @escaping @Sendable (FakeServerHost) -> Void,
            afterLaterFrame: @escaping @Sendable () -> Void = {}
        ) throws {
            let fired = Box(false)
            hub.host.onWrite { host, _, text in
                guard text.contains(#""type":"frame""#) else { return }
                if fired.value.withLock({ done in defer { done = true }; return done }) {
                    afterLaterFrame()
                } else {
                    duringFirstFrame(host)
                }
            }
            hub.host.fireTimerAndWait()
            let expected = viewers.count
            try waitUntil("every viewer has the sub-tick's frame") { framesSinceSetUp().count == expected }
            hub.host.onWrite { _, _, _ in }
        }
    }

    @Test func aFixArrivingDuringASubTicksWritesIsReadBeforeTheRestAreWritten() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        let hub = scene.hub
        let fixesReadAtWrite = Box([Int]())  // fixes the hub had read when each later frame went out
        let courier = scene.courier
        let ts = hub.clock.now - 5_000
        try scene.subTick(
            duringFirstFrame: { host in host.send(courier, Scene.fix(trip: 0, seq: 2, lat: 38.7055, ts: ts, id: 200)) },
            afterLaterFrame: { fixesReadAtWrite.value.withLock { $0.append(hub.hub.services.metrics.fixesIn) } })
        let frames = scene.framesSinceSetUp()
        let readAt = fixesReadAtWrite.value.withLock { $0 }
        #expect(readAt.count == frames.count - 1)
        // Before: the whole sub-tick was written first, so every one of these saw 8 fixes read.
        #expect(readAt.last == Self.trips + 1)  // read (and judged) before the sub-tick's last frame
        #expect(readAt.filter { $0 == Self.trips + 1 }.count >= Self.viewersPerTrip)  // a trip's worth of frames at least came after it
        let yields = hub.host.onServiceThreadAndWait { _ in hub.hub.services.metrics.tickYields }
        #expect(yields >= 1)
        try hub.waitForMessage(courier, "the ack of the fix") { $0["type"] as? String == "ack" && $0["re"] as? Int == 200 && $0["applied"] as? Bool == true }
    }

    @Test func aRefusedFixIsAnsweredBetweenTheSubTicksWrites() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        let courier = scene.courier
        try scene.subTick(duringFirstFrame: { host in
            host.send(courier, #"{"op":"fix","id":300,"trip":"t0","lat":95,"lon":-9.14,"ts":1,"seq":3}"#)
        })
        let log = scene.hub.host.writeLog
        let errorAt = try #require(log.indices.first { log[$0].id == courier && log[$0].text.contains(#""type":"error""#) })
        let frames = scene.framesSinceSetUp()
        #expect(log[errorAt].text.contains(#""re":300"#))
        // Before: the error came after the sub-tick's last frame. Now frames follow it.
        #expect(frames.filter { $0.index > errorAt }.count >= Self.viewersPerTrip)
        #expect(frames.filter { $0.index < errorAt }.count >= 1)
    }

    /// The same scene twice, one sub-tick and the tick after it: once with a courier's
    /// message arriving in the middle of the sub-tick's writes (it steps aside), once without.
    /// Every viewer gets the same frames (their time `t` aside: each scene has its own clock).
    @Test func viewersGetTheSameFramesWhenASubTickStepsAside() throws {
        func framesSeen(interrupted: Bool) throws -> (perViewer: [[[String: Any]]], yields: Int) {
            let scene = try Scene()
            defer { scene.hub.stop() }
            let courier = scene.courier
            try scene.subTick(duringFirstFrame: { host in
                if interrupted { host.send(courier, #"{"op":"ping","id":400}"#) }
            })
            let yields = scene.hub.host.onServiceThreadAndWait { _ in scene.hub.hub.services.metrics.tickYields }
            scene.hub.clock.advance(ms: 100)
            scene.hub.tick(subTicks: scene.hub.hub.services.trips.animating.phases)
            let perViewer = scene.viewers.map { viewer in
                scene.hub.messages(viewer).filter { $0["type"] as? String == "frame" }.map { $0.filter { $0.key != "t" } }
            }
            return (perViewer, yields)
        }
        let steppedAside = try framesSeen(interrupted: true)
        let straight = try framesSeen(interrupted: false)
        #expect(steppedAside.yields >= 1)
        #expect(straight.yields == 0)
        #expect(steppedAside.perViewer.allSatisfy { !$0.isEmpty })
        #expect(steppedAside.perViewer.count == straight.perViewer.count)
        for (a, b) in zip(steppedAside.perViewer, straight.perViewer) {
            #expect(a.count == b.count)
            for (x, y) in zip(a, b) { #expect(NSDictionary(dictionary: x).isEqual(to: y)) }
        }
    }
}

/// A value shared between the test and the fake host's service thread.
private final class Box<Value: Sendable>: Sendable {
    let value: HubMutex<Value>
    init(_ value: Value) { self.value = HubMutex(value) }
}
