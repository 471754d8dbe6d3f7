import Foundation

/// systemd's readiness protocol (sd_notify(3)) without libsystemd: one datagram per state
/// on the AF_UNIX socket named by `NOTIFY_SOCKET`; a name starting with `@` is in the
/// abstract namespace. Without `NOTIFY_SOCKET` (not under `Type=notify`) it does nothing.
struct SystemdNotify: Sendable {
    let socketPath: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let path = environment["NOTIFY_SOCKET"] ?? ""
        socketPath = path.isEmpty ? nil : path
    }

    /// Sends `state` (`READY=1`, `STOPPING=1`). Returns a reason when it could not be sent
    /// (for a warning: the hub runs on, but systemd will time the start out).
    @discardableResult
    func send(_ state: String) -> String? {
        guard let socketPath else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketPath.utf8)
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        // A path needs room for its terminating NUL; an abstract name is counted, not terminated.
        guard name.count < capacity || (abstract && name.count <= capacity) else {
            return "NOTIFY_SOCKET \(socketPath) is longer than a socket address"
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t((MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? MemoryLayout<sa_family_t>.size) + name.count + (abstract ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "NOTIFY_SOCKET: socket: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sockaddrPointer, length) }
            }
        }
        guard sent == message.count else { return "NOTIFY_SOCKET \(socketPath): \(String(cString: strerror(errno)))" }
        return nil
    }
}
