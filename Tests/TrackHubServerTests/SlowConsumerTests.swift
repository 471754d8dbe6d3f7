import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL 7: frames are latest-wins per trip, a subscriber that cannot keep up never
/// slows down anyone else, and a connection whose unsent data stays over `--max-unsent`
/// for 2 s is closed with 1008.
@Suite struct SlowConsumerTests {
    @Test func aReaderThatNeverReadsIsClosedWhileOthersGetEveryFrame() throws {
        try withTestHub(configure: { $0.maxUnsentBytes = 64 * 1024 }) { hub, clients in
            #expect(hub.hub.config.maxUnsentDurationMs == 2000)
            try hub.createLisbonTrip("busy")
            // A long street drawn with 5 000 points: each snapshot of it is over 100 KB.
            try hub.createLisbonTrip("bulky", points: 5000)
            let fast = try (0..<2).map { _ in try clients.connect() }
            for viewer in fast { try viewer.subscribe("busy", id: 1) }
            let courierConnection = try clients.connect()

            // The slow one: a raw socket with a small receive buffer that is never read.
            let slow = try RawWebSocket(port: hub.port, receiveBuffer: 4096)
            try slow.sendJSON(["op": "subscribe", "trip": "busy"])

            var courier = Courier(trip: "busy")
            var frames: [[[String: Any]]] = [[], []]
            var along = 0.0
            var droppedWhileStalled: [Double] = []
            func driveOneAnimation(id: Int) throws {
                along += 50
                try courierConnection.sendFix(courier.fix(alongM: along, durationMs: 400), id: id)
                for (i, viewer) in fast.enumerated() {
                    frames[i] += try viewer.collect("busy's frame at \(along) m") {
                        $0.type == "frame" && abs(($0.double("lat") ?? 0) - Lisbon.lat(alongM: along)) < 1e-6
                    }.filter { $0.type == "frame" }
                }
            }

            var closedAfterRounds: Int?
            for round in 1...30 {
                // About half a megabyte of snapshots the slow reader will never take.
                for _ in 0..<4 { try slow.sendJSON(["op": "subscribe", "trip": "bulky"]) }
                try driveOneAnimation(id: round)
                droppedWhileStalled.append(try hub.metric("trackhub_frames_dropped_total") ?? 0)
                if try hub.metric("trackhub_slow_consumer_closes_total") == 1 {
                    closedAfterRounds = round
                    break
                }
            }
            #expect(closedAfterRounds != nil, "the slow reader was never closed")
            // Life goes on for the others after the close.
            for round in 100..<103 { try driveOneAnimation(id: round) }

            #expect(try hub.metric("trackhub_slow_consumer_closes_total") == 1, "only the slow reader is closed")
            // Memory stayed bounded: the stalled reader's frames were replaced, not queued.
            let dropped = droppedWhileStalled.last ?? 0
            #expect(dropped > 0)
            #expect(droppedWhileStalled == droppedWhileStalled.sorted())
            #expect((droppedWhileStalled.first ?? 0) < dropped, "frames_dropped_total grows while the reader is stalled")

            // Every frame of the trip reached both fast subscribers, numbered without a gap.
            for viewerFrames in frames {
                let seqs = viewerFrames.compactMap { $0.int("seq") }
                #expect(seqs.first == 1)
                #expect(seqs == Array(1...(seqs.last ?? 1)), "a gap or a repeat in \(seqs)")
            }
            #expect(frames[0].map { $0.int("seq") } == frames[1].map { $0.int("seq") })

            // The hub hung up on the slow one: the stream ends (after a 1008 close frame, or not).
            slow.setReadTimeout(seconds: 15)
            let code = try slow.readUntilClosed()
            #expect(code == nil || code == 1008, "closed with \(code.map(String.init) ?? "-")")
            #expect(try hub.metric("trackhub_connections") == 3, "the others are still connected")
            #expect(try fast[0].request(["op": "ping"], id: 200).type == "pong")
        }
    }

    @Test func aReaderThatReadsLateGetsItsSnapshotFirstThenEveryEventInOrder() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("catch-up")
            let slow = try RawWebSocket(port: hub.port, receiveBuffer: 4096)
            try slow.sendJSON(["op": "subscribe", "trip": "catch-up", "id": 1])
            let witness = try clients.connect()
            try witness.subscribe("catch-up", id: 1)
            var courier = Courier(trip: "catch-up")
            try witness.sendFix(courier.fix(alongM: 100), id: 2)
            try witness.sendFix(courier.fix(alongM: 100, eastM: 300), id: 3)
            try witness.sendFix(courier.fix(alongM: 200), id: 4)
            try witness.sendFix(courier.fix(alongM: 400, durationMs: 500), id: 5)
            let last = try witness.nextFrame(atLat: Lisbon.lat(alongM: 400))
            // The slow reader now reads everything that waited for it.
            var received: [[String: Any]] = []
            while received.last?.int("seq") != last.int("seq") || received.last?.type != "frame" {
                received.append(try slow.nextMessage())
            }
            let events = received.filter { $0.type == "event" }
            #expect(events.compactMap { $0.int("n") } == [2, 3], "no event is ever dropped")
            let seqs = received.filter { $0.type == "frame" }.compactMap { $0.int("seq") }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
            #expect(received.first?.type == "snapshot")
        }
    }
}
