import Foundation
import TrackHubCore
import TrackHubProtocol

/// trackhub-load's receive path without a network: the messages it gets, as the hub's own
/// encoders write them, read field by field as `LoadRun+Receive.swift` reads them (the type,
/// then only the fields it measures) through `ServerMessage`. Prints nanoseconds per message
/// for each kind and for the `large` scenario's mix (bench/load/scenario.sh: per second,
/// 100 000 viewer frames, 10 000 courier frames, 1 000 acks).
enum MessageBench {
    /// One kind of message and what the generator reads of it.
    struct Case {
        var name: String
        var message: [UInt8]
        var read: (ServerMessage) -> Int64
    }

    static func cases() -> [Case] {
        let t0: Int64 = 1_765_000_000_000
        let frame = TripFrame(
            t: t0 + 100, position: GeoPoint(lat: 60.1699123, lon: 24.9384567), bearingDeg: 87.3, progress: 0.41234,
            doneM: 2345.6, remainingM: 3456.7, etaS: 288, leg: 1, status: .moving)
        let segment = TripSegment(
            t0: t0, durationMs: 1000, path: [GeoPoint(lat: 60.1699, lon: 24.9384), GeoPoint(lat: 60.1701, lon: 24.9389)],
            progressFrom: 0.41, progressTo: 0.42, doneM: 2345.6, remainingM: 3456.7, etaS: 288, leg: 1, status: .moving)
        let items = (0..<40).map { i in
            FleetItem(id: "load-123-\(i)", lat: 60 + Double(i) * 0.01, lon: 24.9, count: 1, trip: "load-123-\(i)", status: "moving", bearing: 90)
        }
        let viewport = Viewport(west: 24, south: 59.5, east: 25.5, north: 60.5, zoom: 11)
        let trip = "load-4242-000123"
        return [
            // A trip viewer's frame: the type, `seq`, `t`.
            Case(name: "frame (viewer)", message: ServerMessages.frame(trip: trip, seq: 1234, frame)) { m in
                guard m.type == .frame else { return 0 }
                let (seq, t) = m.members("seq", "t")
                guard let seq = seq?.int else { return 0 }
                return seq &+ (t?.int ?? 0)
            },
            // A courier's ack: the type, `seq`, `applied`.
            Case(name: "ack (courier)", message: ServerReplies.ack(re: .integer(77), trip: trip, seq: 77, applied: true)) { m in
                guard m.type == .ack else { return 0 }
                let (seq, applied) = m.members("seq", "applied")
                guard let seq = seq?.int else { return 0 }
                return seq &+ (applied?.bool == true ? 1 : 0)
            },
            Case(name: "segment (viewer)", message: ServerMessages.segment(trip: trip, seq: 99, segment)) { m in
                guard m.type == .segment else { return 0 }
                let (seq, t0) = m.members("seq", "t0")
                guard let seq = seq?.int else { return 0 }
                return seq &+ (t0?.int ?? 0)
            },
            Case(name: "event (viewer)", message: ServerMessages.event(trip: trip, TripEvent(n: 5, kind: .ended, t: t0, position: nil))) { m in
                guard m.type == .event else { return 0 }
                return m.string("name", is: "ended") ? 1 : 2
            },
            // A fleet tick's update: no `re`, so the whole message is walked before `t`.
            Case(name: "clusters, 40 items (fleet)", message: FleetMessages.clusters(
                re: nil, t: t0, viewport: viewport, total: 1000, truncated: false, items: items)) { m in
                guard m.type == .clusters else { return 0 }
                if let re = m.int("re") { return re }
                return m.int("t") ?? 0
            },
        ]
    }

    /// Runs every case, or those whose name starts with `only` (e.g. `frame`, for a profile).
    static func run(only: String? = nil) {
        print("trackhub-bench messages: trackhub-load's reads per received message (ServerMessage)")
        let cases = cases().filter { only == nil || $0.name.hasPrefix(only!) }
        var nsByCase: [String: Double] = [:]
        for c in cases {
            let ns = measure(c)
            nsByCase[c.name] = ns
            let name = c.name.padding(toLength: 28, withPad: " ", startingAt: 0)
            print(String(format: "  %@ %5d bytes  %7.1f ns/message", name, c.message.count, ns))
        }
        // The large scenario's mix: 110 000 frames and 1 000 acks a second.
        guard let frameNs = nsByCase["frame (viewer)"], let ackNs = nsByCase["ack (courier)"] else { return }
        let mix = (110_000 * frameNs + 1_000 * ackNs) / 111_000
        print(String(format: "  large-scenario mix: %.1f ns/message, %.2f%% of one core at 111 000 messages/s", mix, mix * 111_000 / 1e7))
    }

    /// Nanoseconds per read, the best of five rounds of a million.
    static func measure(_ c: Case) -> Double {
        // Distinct arrays, as each received message is: a loop over one array would keep it hot
        // in a way the generator's inbox does not.
        let copies = (0..<1024).map { _ in ServerMessage(c.message.map { $0 }) }
        var sink: Int64 = 0
        for message in copies { sink &+= c.read(message) }
        var best = Double.infinity
        let n = 1_000_000
        for _ in 0..<5 {
            let start = nowNs()
            for i in 0..<n { sink &+= c.read(copies[i & 1023]) }
            best = min(best, Double(nowNs() - start) / Double(n))
        }
        if sink == 42 { print("") }
        return best
    }
}
