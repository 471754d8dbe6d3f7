import Dispatch
import Foundation
import Testing
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore
import TrackHubSync
@testable import TrackHubServer
import TrackHubTesting

/// `GET /v1/trips/{id}/trail` streams long trails page by page (chunked), with the same bytes
/// a whole-trail encoding gives.
@Suite struct TrailStreamingTests {
    /// The trail as encoded whole, the way the hub did before it streamed (the reference).
    static func wholeEncoding(id: String, _ fixes: [StoredFix]) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 128 + fixes.count * 64)
        w.beginObject()
        w.field("type", "Feature")
        w.key("geometry")
        if fixes.count >= 2 {
            w.beginObject()
            w.field("type", "LineString")
            w.key("coordinates")
            w.beginArray()
            for stored in fixes { w.lonLat(lon: stored.fix.lon, lat: stored.fix.lat) }
            w.endArray()
            w.endObject()
        } else {
            w.null()
        }
        w.key("properties")
        w.beginObject()
        w.field("trip", id)
        w.key("ts")
        w.beginArray()
        for stored in fixes { w.int(stored.fix.ts) }
        w.endArray()
        w.key("seq")
        w.beginArray()
        for stored in fixes {
            if let seq = stored.fix.seq { w.int(seq) } else { w.null() }
        }
        w.endArray()
        w.key("reason")
        w.beginArray()
        for stored in fixes {
            if let reason = stored.refusal { w.string(reason.rawValue) } else { w.null() }
        }
        w.endArray()
        let attributes: [(String, (FixInput) -> Double?)] = [("speed_mps", \.speedMps), ("altitude", \.altitudeM), ("battery", \.batteryPercent)]
        for (name, value) in attributes {
            w.key(name)
            w.beginArray()
            for stored in fixes {
                if let v = value(stored.fix) { w.double(v) } else { w.null() }
            }
            w.endArray()
        }
        w.endObject()
        w.endObject()
        return w.finish()
    }

    static func expected(_ hub: TestHub, id: String, from: Int64? = nil, to: Int64? = nil) throws -> [UInt8] {
        wholeEncoding(id: id, try hub.store.trail(tripID: id, from: from, to: to, limit: 1_000_000))
    }

    /// Posts `count` fixes in batches of 1 000: about 5 m apart, one a second, every 7th
    /// without seq, every 500th late (stored, refused `out_of_order`). Returns their ts.
    @discardableResult
    static func postFixes(_ hub: TestHub, trip: String, count: Int) throws -> [Int64] {
        let start = nowMillis() - Int64(count) * 1000 - 60_000
        var times: [Int64] = []
        for batchStart in stride(from: 0, to: count, by: 1000) {
            var fixes: [[String: Any]] = []
            for i in batchStart..<min(count, batchStart + 1000) {
                var ts = start + Int64(i) * 1000
                if i % 500 == 499 { ts -= 2500 }
                var fix: [String: Any] = ["lat": 38.7 + Double(i) * 4.5e-5, "lon": -9.14, "ts": ts]
                if i % 7 != 3 { fix["seq"] = i + 1 }
                fixes.append(fix)
                times.append(ts)
            }
            let (status, json) = try hub.httpJSON("POST", "/v1/trips/\(trip)/fixes", json: ["fixes": fixes])
            #expect(status == 200, "\(json)")
        }
        return times
    }

    @Test func aLongTrailComesBackWholeInOrderAndChunked() throws {
        try withTestHub { hub, _ in
            try hub.createTrip(["id": "long"])
            let times = try Self.postFixes(hub, trip: "long", count: 25_000)

            let connection = try KeepAliveConnection(port: hub.port)
            let (head, body) = try connection.get("/v1/trips/long/trail")
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.lowercased().contains("transfer-encoding: chunked"))
            #expect(!head.lowercased().contains("content-length"))
            let same = Array(body) == (try Self.expected(hub, id: "long"))
            #expect(same, "the bytes of a whole encoding")

            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let coordinates = try #require((json["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
            let properties = try #require(json["properties"] as? [String: Any])
            let ts = try #require(properties["ts"] as? [Int64])
            let seq = try #require(properties["seq"] as? [Any])
            let reasons = try #require(properties["reason"] as? [Any])
            #expect(coordinates.count == 25_000 && ts.count == 25_000 && seq.count == 25_000 && reasons.count == 25_000)
            #expect(ts == times.sorted(), "every fix, ordered by ts")
            #expect(reasons.compactMap { $0 as? String }.count == 50, "the late ones are refused, and stored")
            #expect(properties["trip"] as? String == "long")

            // The connection is still good for another request.
            let (againHead, again) = try connection.get("/healthz")
            #expect(againHead.hasPrefix("HTTP/1.1 200"))
            #expect(String(decoding: again, as: UTF8.self).contains("\"status\""))
        }
    }

    @Test func fromAndToStillSelectOnTs() throws {
        try withTestHub { hub, _ in
            try hub.createTrip(["id": "window"])
            let times = try Self.postFixes(hub, trip: "window", count: 9_000).sorted()

            let (from, to) = (times[1_234], times[7_777])
            let (status, body) = try hub.http("GET", "/v1/trips/window/trail?from=\(from)&to=\(to)")
            #expect(status == 200)
            let same = Array(body) == (try Self.expected(hub, id: "window", from: from, to: to))
            #expect(same)
            let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            let ts = (json?["properties"] as? [String: Any])?["ts"] as? [Int64]
            #expect(ts == times.filter { $0 >= from && $0 <= to }, "inclusive on both ends")

            let (_, single) = try hub.http("GET", "/v1/trips/window/trail?from=\(times[4_000])&to=\(times[4_000])")
            #expect(String(decoding: single, as: UTF8.self) == String(decoding: try Self.expected(hub, id: "window", from: times[4_000], to: times[4_000]), as: UTF8.self))
            #expect((try JSONSerialization.jsonObject(with: single) as? [String: Any])?["geometry"] is NSNull)
            let (_, tail) = try hub.http("GET", "/v1/trips/window/trail?from=\(times[8_999])")
            #expect(String(decoding: tail, as: UTF8.self) == String(decoding: try Self.expected(hub, id: "window", from: times[8_999]), as: UTF8.self))
        }
    }

    @Test func aSmallTrailIsUnchangedAndSentWhole() throws {
        try withTestHub { hub, _ in
            try hub.createTrip(["id": "short"])
            let connection = try KeepAliveConnection(port: hub.port)
            let (emptyHead, empty) = try connection.get("/v1/trips/short/trail")
            #expect(emptyHead.lowercased().contains("content-length"))
            #expect(String(decoding: empty, as: UTF8.self)
                == #"{"type":"Feature","geometry":null,"properties":{"trip":"short","ts":[],"seq":[],"reason":[],"speed_mps":[],"altitude":[],"battery":[]}}"#)

            try Self.postFixes(hub, trip: "short", count: 30)
            let (head, body) = try connection.get("/v1/trips/short/trail")
            #expect(head.lowercased().contains("content-length: \(body.count)"))
            #expect(!head.lowercased().contains("chunked"))
            #expect(String(decoding: body, as: UTF8.self) == String(decoding: try Self.expected(hub, id: "short"), as: UTF8.self))
        }
    }

    /// Fixes stored while a trail streams (here one sorting into its middle) are in none of its
    /// arrays, so they stay aligned.
    @Test func fixesStoredWhileStreamingAreLeftOut() throws {
        let store = MemoryTripStore()
        defer { store.close() }
        func append(_ fixes: [FixInput]) {
            let done = DispatchSemaphore(value: 0)
            store.append(fixes.map { .fix(tripID: "live", fix: $0, refusal: nil, receivedAt: 0) }) { _ in done.signal() }
            done.wait()
        }
        let t0: Int64 = 1_700_000_000_000
        let fixes = (0..<1_000).map { FixInput(lat: 38.7 + Double($0) * 4.5e-5, lon: -9.14, ts: t0 + Int64($0) * 1000, seq: Int64($0) + 1) }
        append(fixes)
        let stream = try TrailStream(store: store, tripID: "live", query: TrailQuery(), pageSize: 64)
        #expect(!stream.fitsInOnePage)
        var body = try #require(try stream.nextChunk())
        append([FixInput(lat: 38.71, lon: -9.14, ts: t0 + 500_500, seq: 5_000)])
        var chunks = 1
        while let chunk = try stream.nextChunk() {
            body += chunk
            chunks += 1
        }
        #expect(chunks > 4 * (1_000 / 64), "page by page, four passes")
        let stored = fixes.map { StoredFix(fix: $0, refusal: nil) }
        let same = body == Self.wholeEncoding(id: "live", stored)
        #expect(same, "the fixes of the mark, all arrays alike")
    }

    /// No trail page is read on the service thread: while the first page (with the mark) and
    /// then a later page are held in the store, the hub still answers another client.
    @Test func theServiceThreadAnswersWhileATrailPageIsRead() throws {
        try withTestHub { hub, _ in
            let gate = ReadGate()
            // Let any held read finish before the hub stops.
            defer { gate.open() }
            try hub.createTrip(["id": "held"])
            try Self.postFixes(hub, trip: "held", count: 5_000)  // three pages
            let expected = try Self.expected(hub, id: "held")
            hub.store.holdTrailReads(gate)

            let reader = try KeepAliveConnection(port: hub.port)
            try reader.sendGet("/v1/trips/held/trail")
            #expect(gate.waitForRead(), "the first page is being read")
            #expect(try hub.http("GET", "/healthz").status == 200, "answered while the first page is read")
            gate.release()
            #expect(gate.waitForRead(), "a later page is being read")
            #expect(try hub.http("GET", "/healthz").status == 200, "answered while a later page is read")
            gate.open()

            let (head, body) = try reader.readAnswer()
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.lowercased().contains("transfer-encoding: chunked"))
            #expect(Array(body) == expected, "the bytes of a whole encoding")
        }
    }

    /// A client that goes away mid-stream: lws mostly reads nothing while it answers, so it
    /// finds out at the next write, made once a page is back; by then the host has asked for
    /// the page after it (one read ahead). Either way a page read is in flight when the
    /// connection closes; it comes back to a connection that is gone and is dropped, and the
    /// hub carries on (run under ASan too).
    @Test func aConnectionClosedWhileAPageIsReadDropsThatPage() throws {
        try withTestHub { hub, _ in
            let gate = ReadGate()
            // Let any held read finish before the hub stops.
            defer { gate.open() }
            try hub.createTrip(["id": "gone"])
            try Self.postFixes(hub, trip: "gone", count: 5_000)
            try waitUntil("the posting connections are closed") { try Self.openConnections(hub) == 0 }
            hub.store.holdTrailReads(gate)

            let fd = try Loopback.connect(port: hub.port)
            let request = Array("GET /v1/trips/gone/trail HTTP/1.1\r\nHost: 127.0.0.1:\(hub.port)\r\n\r\n".utf8)
            #expect(send(fd, request, request.count, 0) == request.count)
            #expect(gate.waitForRead(), "the first page is being read")
            gate.release()
            #expect(gate.waitForRead(), "the second page is being read")
            var buffer = [UInt8](repeating: 0, count: 4096)
            #expect(recv(fd, &buffer, buffer.count, 0) > 0, "the answer has begun")
            // A reset, so that the next write fails at once (after a FIN, the first one still goes).
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            close(fd)
            // The second page comes back and the third is asked for (held) as the write fails; or,
            // when lws saw the reset first, the second page comes back to no connection.
            gate.release()
            try waitUntil("the hub has seen the connection close") { try Self.openConnections(hub) == 0 }
            gate.open()  // a page still held comes back to a connection that is gone

            let (status, body) = try hub.http("GET", "/v1/trips/gone/trail")
            #expect(status == 200)
            #expect(Array(body) == (try Self.expected(hub, id: "gone")))
        }
    }

    /// The fake host joins a streamed trail by pulling its parts, as lws does.
    @Test func theFakeHostJoinsAStreamedTrail() throws {
        let hub = try SocketlessHub()
        defer { hub.stop() }
        #expect(try hub.http(.post, "/v1/trips", json: ["id": "fake"]).status == 201)
        let t0: Int64 = 1_700_000_000_000
        let fixes = (0..<4_500).map { FixInput(lat: 38.7 + Double($0) * 4.5e-5, lon: -9.14, ts: t0 + Int64($0) * 1000, seq: Int64($0) + 1) }
        let stored = DispatchSemaphore(value: 0)
        hub.store.append(fixes.map { .fix(tripID: "fake", fix: $0, refusal: nil, receivedAt: 0) }) { _ in stored.signal() }
        stored.wait()

        let response = try #require(hub.host.requestAndWait(.get, "/v1/trips/fake/trail"))
        #expect(response.status == 200)
        #expect(!response.isStreamed, "joined whole")
        let same = response.body == Self.wholeEncoding(id: "fake", fixes.map { StoredFix(fix: $0, refusal: nil) })
        #expect(same)
    }

    /// Open TCP connections to the hub from loopback, as its host counts them (read on the service thread).
    static func openConnections(_ hub: TestHub) throws -> Int {
        let count = HubMutex<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        hub.hub.services.inbox.run {
            count.withLock { $0 = (hub.hub.services.host as? LWSServerHost)?.connectionCount(from: "127.0.0.1") }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success, let value = count.withLock({ $0 }) else {
            throw TestFailure(description: "the service thread did not count the connections")
        }
        return value
    }
}

/// One HTTP/1.1 connection kept open across requests; answers read whole (length or chunked).
final class KeepAliveConnection {
    private let fd: Int32
    private let port: Int

    init(port: Int) throws {
        self.port = port
        // A deadline for each answer, not a speed check (a long trail under ASan on a busy machine).
        fd = try Loopback.connect(port: port, readTimeoutSeconds: 60)
    }

    deinit { close(fd) }

    /// Sends a GET and reads its whole answer: the head and the (de-chunked) body.
    func get(_ path: String) throws -> (head: String, body: Data) {
        try sendGet(path)
        return try readAnswer()
    }

    /// Sends a GET without reading its answer.
    func sendGet(_ path: String) throws {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { throw HTTPTestClient.Failure(description: "send failed") }
    }

    /// Reads one whole answer: the head and the (de-chunked) body.
    func readAnswer() throws -> (head: String, body: Data) {
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            // Which of the two ended it, and how far it got: a close and a missed deadline
            // (EAGAIN, e.g. under ThreadSanitizer's slowdown) have different causes.
            if n == 0 {
                throw HTTPTestClient.Failure(description: "connection closed before the whole answer (\(response.count) bytes read)")
            }
            if n < 0 {
                throw HTTPTestClient.Failure(description: "no whole answer: recv failed, errno \(errno) (\(response.count) bytes read)")
            }
            response.append(contentsOf: buffer[0..<n])
            if let parsed = HTTPTestClient.parse(response), let separator = response.range(of: Data("\r\n\r\n".utf8)) {
                return (String(decoding: response[..<separator.lowerBound], as: UTF8.self), parsed.body)
            }
        }
    }
}
