import Foundation

/// Minimal blocking HTTP/1.1 client over a loopback socket (URLSession is avoided: it pulls
/// libcurl quirks). One request per connection (`Connection: close`).
public enum HTTPTestClient {
    /// What this throws (`TestFailure`): a connection refused, or no whole HTTP answer before the
    /// hub closed or 60 s passed.
    public typealias Failure = TestFailure

    /// Sends one request (`json` encoded as the body when given) and returns status and body.
    public static func request(port: Int, method: String, path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, body: Data) {
        let answer = try exchange(port: port, method: method, path: path, json: json, body: body, headers: headers)
        return (answer.status, answer.body)
    }

    /// The same request, with the answer's headers (names lower-cased; a repeated header's values joined with ", ").
    public static func exchange(port: Int, method: String, path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, headers: [String: String], body: Data) {
        var payload = body ?? Data()
        if let json { payload = try JSONSerialization.data(withJSONObject: json) }
        // A deadline, not a speed check: a 1 000-fix POST stored under ASan on a busy
        // machine took more than 10 s once (CI), and a test waits for its answer.
        let fd = try Loopback.connect(port: port, readTimeoutSeconds: 60)
        defer { close(fd) }
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

    /// The header fields of a response (names lower-cased; a repeated header's values joined with ", ").
    public static func headerFields(_ data: Data) -> [String: String] {
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
    public static func parse(_ data: Data, complete: Bool = false) -> (status: Int, body: Data)? {
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
    public static func dechunk(_ body: Data) -> Data? {
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
