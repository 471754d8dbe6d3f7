import Foundation
import TrackHubProtocol

/// A hand-rolled WebSocket client on a blocking socket, for what the libwebsockets test
/// client cannot do: stop reading altogether (a slow consumer), or send a binary frame.
/// It only reads when told to.
public final class RawWebSocket {
    /// What this throws (`TestFailure`): an upgrade refused, a close, a reset, a read past its
    /// timeout, a message that is not a JSON object.
    public typealias Failure = TestFailure

    /// The connected socket (closed when this is released).
    public let fd: Int32
    /// Bytes received after the upgrade response and not yet parsed.
    private var pending: [UInt8] = []

    /// Connects and upgrades. `receiveBuffer` sets SO_RCVBUF before connecting (small: a
    /// reader whose kernel buffer fills quickly).
    public init(port: Int, path: String = "/v1/ws", receiveBuffer: Int32? = nil) throws {
        fd = try Loopback.connect(port: port, readTimeoutSeconds: 10, receiveBuffer: receiveBuffer)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: trackhub.v1\r\n\r\n"
        try writeAll(Array(request.utf8))
        var head: [UInt8] = []
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            let chunk = try readSome()
            guard !chunk.isEmpty else { throw Failure(description: "closed during the upgrade") }
            head += chunk
            if let end = head.firstRange(of: separator) {
                pending = Array(head[end.upperBound...])
                let text = String(decoding: head[..<end.lowerBound], as: UTF8.self)
                guard text.hasPrefix("HTTP/1.1 101") else { throw Failure(description: "upgrade refused: \(text)") }
                return
            }
        }
    }

    deinit { Glibc.close(fd) }

    /// Sets `SO_RCVTIMEO`: a read waits at most this long, then throws.
    public func setReadTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends one masked client frame (FIN set).
    public func sendFrame(opcode: UInt8, _ payload: [UInt8]) throws {
        var frame: [UInt8] = [0x80 | opcode]
        let count = payload.count
        if count < 126 {
            frame.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame += [UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(count) >> (UInt64($0) * 8)) & 0xFF) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try writeAll(frame)
    }

    /// Sends one text frame.
    public func sendText(_ text: String) throws { try sendFrame(opcode: 0x1, Array(text.utf8)) }

    /// Sends a JSON object as one text frame.
    public func sendJSON(_ object: [String: Any]) throws {
        try sendFrame(opcode: 0x1, Array(try JSONSerialization.data(withJSONObject: object)))
    }

    /// Reads until the hub closes: returns the close code if a close frame came first
    /// (nil when the stream just ended, or was reset). Throws on a read timeout.
    public func readUntilClosed() throws -> UInt16? {
        while true {
            while let frame = parseFrame() {
                if frame.opcode == 0x8 {
                    return frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : nil
                }
            }
            let chunk: [UInt8]
            do {
                chunk = try readSome()
            } catch let error as Failure where error.description.contains("reset") {
                return nil
            }
            if chunk.isEmpty { return nil }
            pending += chunk
        }
    }

    /// Reads the next text message and decodes it as a server message (`ServerMessage`);
    /// throws on close, timeout, or a message that is not a JSON object.
    public func nextMessage() throws -> [String: Any] {
        let text = try nextText()
        guard let object = ServerMessage(text).foundationObject() else { throw Failure(description: "not a JSON object: \(text)") }
        return object
    }

    /// Reads the next text message (skipping control frames). Throws on close or timeout.
    public func nextText() throws -> String {
        while true {
            while let frame = parseFrame() {
                if frame.opcode == 0x8 { throw Failure(description: "closed") }
                if frame.opcode == 0x1 { return String(decoding: frame.payload, as: UTF8.self) }
            }
            let chunk = try readSome()
            if chunk.isEmpty { throw Failure(description: "end of stream") }
            pending += chunk
        }
    }

    private func parseFrame() -> (opcode: UInt8, payload: [UInt8])? {
        guard pending.count >= 2 else { return nil }
        let opcode = pending[0] & 0x0F
        var length = Int(pending[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard pending.count >= 4 else { return nil }
            length = Int(pending[2]) << 8 | Int(pending[3])
            offset = 4
        } else if length == 127 {
            guard pending.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | Int(pending[$1]) }
            offset = 10
        }
        guard pending.count >= offset + length else { return nil }
        let payload = Array(pending[offset..<(offset + length)])
        pending.removeFirst(offset + length)
        return (opcode, payload)
    }

    private func readSome() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        if n < 0 {
            let code = errno
            if code == ECONNRESET { throw Failure(description: "connection reset") }
            throw Failure(description: "recv failed: errno \(code)")
        }
        return Array(buffer[0..<n])
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if n <= 0 { throw Failure(description: "send failed: errno \(errno)") }
                sent += n
            }
        }
    }
}
