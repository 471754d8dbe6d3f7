import Foundation

/// Loopback sockets for the wire tests: the one place that connects a blocking TCP socket to
/// `127.0.0.1`, and the free-port finder for servers started by the tests (Redis).
public enum Loopback {
    /// A blocking TCP socket connected to `127.0.0.1:port`. `readTimeoutSeconds` sets
    /// `SO_RCVTIMEO` (a `recv` then fails instead of hanging); `receiveBuffer` sets
    /// `SO_RCVBUF` before connecting (small: a reader whose kernel buffer fills quickly).
    /// The caller closes the descriptor. Throws `TestFailure` when it cannot connect.
    public static func connect(port: Int, readTimeoutSeconds: Int = 10, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure(description: "socket failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: readTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure(description: "connect to 127.0.0.1:\(port) failed")
        }
        return fd
    }

    /// A loopback port that was free a moment ago (bound to port 0, read back, released),
    /// for a server that must be told its port. A hub under test binds port 0 itself instead.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure(description: "socket failed") }
        defer { close(fd) }
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A loopback port `p` such that `p` and `p + 10 000` were both free a moment ago: a
    /// Redis Cluster node listens on both (its cluster bus on the second). Both lie below
    /// Linux's ephemeral range (32 768 and up), which the kernel hands to every outgoing
    /// connection and to `freePort`: a bus port there could be taken by a test running beside
    /// this one before redis-server binds it, and the node would never start.
    public static func freePortWithBus() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 12_000..<22_768)
            if isFree(port) && isFree(port + 10_000) { return port }
        }
        throw TestFailure(description: "no free port pair p, p + 10000 in 12000-32767")
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopbackAddress(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
