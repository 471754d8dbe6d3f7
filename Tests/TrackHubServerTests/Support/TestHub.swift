import Foundation
import Testing
import TrackHubStore
@testable import TrackHubServer

/// A real hub on an ephemeral loopback port, on the poll loop so that many tests can run
/// one each in this process (only one lws-owned libev loop may exist per process).
final class TestHub: @unchecked Sendable {
    let hub: Hub
    let store: MemoryTripStore
    var port: Int { hub.port }

    init(configure: (inout HubConfig) -> Void = { _ in }) throws {
        var config = HubConfig()
        config.listenHost = "127.0.0.1"
        config.listenPort = 0
        config.useLibev = false
        config.webRoot = TestHub.packageRoot + "/web-client"
        configure(&config)
        store = MemoryTripStore()
        hub = Hub(config: config, store: store)
        try hub.start()
    }

    func stop() { hub.stopNow() }

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// An HTTP request to the hub; returns status and body.
    func http(_ method: String, _ path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, body: Data) {
        try HTTPTestClient.request(port: port, method: method, path: path, json: json, body: body, headers: headers)
    }

    /// Same, decoding the body as a JSON object.
    func httpJSON(_ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]) throws -> (status: Int, json: [String: Any]) {
        let (status, data) = try http(method, path, json: json, headers: headers)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (status, object)
    }

    /// Creates a trip over HTTP and checks the 201.
    @discardableResult
    func createTrip(_ body: [String: Any]) throws -> [String: Any] {
        let (status, json) = try httpJSON("POST", "/v1/trips", json: body)
        #expect(status == 201, "create trip answered \(status): \(json)")
        return json
    }
}

/// Minimal blocking HTTP/1.1 client over a socket (URLSession is avoided: it pulls libcurl quirks).
enum HTTPTestClient {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func request(port: Int, method: String, path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, body: Data) {
        let answer = try exchange(port: port, method: method, path: path, json: json, body: body, headers: headers)
        return (answer.status, answer.body)
    }

    /// The same request, with the answer's headers (names lower-cased; a repeated header's values joined with ", ").
    static func exchange(port: Int, method: String, path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, headers: [String: String], body: Data) {
        var payload = body ?? Data()
        if let json { payload = try JSONSerialization.data(withJSONObject: json) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect failed") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(payload.count)\r\n"
        if json != nil { head += "Content-Type: application/json\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        var request = Data(head.utf8)
        request.append(payload)
        request.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                // The hub may answer from the headers and close without reading the body
                // (401, 413; PROTOCOL 1): stop sending and read its answer.
                if n <= 0 { break }
                sent += n
            }
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
            if let parsed = parse(response) { return (parsed.status, headerFields(response), parsed.body) }
        }
        guard let parsed = parse(response, complete: true) else { throw Failure(description: "no HTTP response") }
        return (parsed.status, headerFields(response), parsed.body)
    }

    static func headerFields(_ data: Data) -> [String: String] {
        guard let separator = data.range(of: Data("\r\n\r\n".utf8)) else { return [:] }
        var fields: [String: String] = [:]
        for line in String(decoding: data[..<separator.lowerBound], as: UTF8.self).components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        return fields
    }

    /// The status and body once `data` holds a whole response (`complete`: the peer has closed).
    /// Bodies come with a Content-Length, chunked (streamed answers), or up to the close.
    static func parse(_ data: Data, complete: Bool = false) -> (status: Int, body: Data)? {
        guard let separator = data.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[..<separator.lowerBound], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        let body = data[separator.upperBound...]
        func headerValue(_ name: String) -> String? {
            lines.dropFirst().first { $0.lowercased().hasPrefix(name + ":") }
                .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        if headerValue("transfer-encoding")?.lowercased() == "chunked" {
            return dechunk(body).map { (status, $0) }  // nil until the last chunk, even at close
        }
        if let length = headerValue("content-length").flatMap({ Int($0) }) {
            return body.count >= length ? (status, Data(body.prefix(length))) : nil
        }
        return complete ? (status, Data(body)) : nil
    }

    /// A chunked body's data (RFC 9112 7.1: `<hex size>[;ext]\r\n<data>\r\n` ..., `0\r\n`,
    /// trailers, `\r\n`); nil while the last chunk has not arrived.
    static func dechunk(_ body: Data) -> Data? {
        let crlf = Data("\r\n".utf8)
        var result = Data()
        var position = body.startIndex
        while true {
            guard let lineEnd = body.range(of: crlf, in: position..<body.endIndex) else { return nil }
            let sizeText = String(decoding: body[position..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { return nil }
            position = lineEnd.upperBound
            if size == 0 {
                // Trailers (none expected), then the empty line.
                while true {
                    guard let end = body.range(of: crlf, in: position..<body.endIndex) else { return nil }
                    if end.lowerBound == position { return result }
                    position = end.upperBound
                }
            }
            guard body.distance(from: position, to: body.endIndex) >= size + 2 else { return nil }
            let dataEnd = body.index(position, offsetBy: size)
            result.append(body[position..<dataEnd])
            position = body.index(dataEnd, offsetBy: 2)
        }
    }
}

/// Waits until `condition` holds, checking every 20 ms, or fails after `timeout` seconds.
/// For conditions nothing notifies about (a hub-side counter, an HTTP-visible state).
func eventually(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    let pause = DispatchSemaphore(value: 0)
    while try !condition() {
        if Date() >= deadline { throw HTTPTestClient.Failure(description: "timed out waiting for \(what)") }
        _ = pause.wait(timeout: .now() + .milliseconds(20))
    }
}

extension TestHub {
    /// Sub-ticks the hub has run (from /metrics): a clock that only the hub advances.
    func subTicks() throws -> Int {
        let text = String(decoding: try http("GET", "/metrics").body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("trackhub_tick_duration_seconds_count ") {
            return Int(line.split(separator: " ")[1]) ?? 0
        }
        return 0
    }

    /// Waits until the hub's own clock has moved on by at least `milliseconds` (its sub-ticks).
    func waitForHubTime(milliseconds: Int) throws {
        let perSecond = hub.config.tickHz * hub.animating.phases
        let target = try subTicks() + (milliseconds * perSecond + 999) / 1000
        try eventually("the hub to run \(milliseconds) ms") { try subTicks() >= target }
    }
}
