import Foundation

/// A tiny blocking HTTP/1.1 client over a TCP socket (one request per connection), enough for
/// the hub's JSON API: predictable, no URLSession or libcurl behaviour in the way.
struct HTTPClient: Sendable {
    var host: String
    var port: Int
    var token: String?
    var timeoutS = 15

    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// Sends `method path` with an optional JSON body and returns the status and body.
    /// - Throws: `SimulatorError.connection` when the hub cannot be reached or answers garbage.
    func request(_ method: String, _ path: String, body: [UInt8]? = nil) throws(SimulatorError) -> Response {
        let fd = try connectSocket()
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nContent-Length: \(body?.count ?? 0)\r\n"
        if body != nil { head += "Content-Type: application/json\r\n" }
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + (body ?? [])
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw .connection("\(method) \(path): send failed") }
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
            if let parsed = Self.parse(response, complete: false) { return parsed }
        }
        guard let parsed = Self.parse(response, complete: true) else { throw .connection("\(method) \(path): no HTTP response") }
        return parsed
    }

    private func connectSocket() throws(SimulatorError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw .connection("cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd >= 0 {
                var timeout = timeval(tv_sec: timeoutS, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
                close(fd)
            }
            entry = info.pointee.ai_next
        }
        throw .connection("cannot connect to \(host):\(port)")
    }

    /// A complete response (by Content-Length, or everything once the peer closed).
    static func parse(_ data: [UInt8], complete: Bool) -> Response? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard data.count >= 4, let end = (0...(data.count - 4)).first(where: { data[$0..<($0 + 4)].elementsEqual(separator) }) else { return nil }
        let head = String(decoding: data[..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        let body = Array(data[(end + 4)...])
        if let line = lines.first(where: { $0.lowercased().hasPrefix("content-length:") }),
           let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) {
            return body.count >= length ? Response(status: status, body: Array(body.prefix(length))) : nil
        }
        return complete ? Response(status: status, body: body) : nil
    }
}
