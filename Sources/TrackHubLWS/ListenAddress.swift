import Foundation

/// `--listen HOST:PORT` made into what libwebsockets can bind (PROTOCOL 14): HOST an IPv4
/// address, an IPv6 address in brackets (`[::1]`), or a name resolved once at start
/// (`localhost`). lws takes `iface` as an interface name or a numeric address; a name such
/// as `localhost` it would look up as an interface, not find, and listen on nothing.
public struct ListenAddress: Sendable, Equatable {
    /// The numeric address to bind (`127.0.0.1`, `::1`, `0.0.0.0`, `::`).
    public var host: String
    /// The TCP port; 0 asks for a free one.
    public var port: Int

    /// An address as given: `host` must already be numeric to be bound.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` with the host in brackets when it is IPv6, for URLs and log lines.
    public var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Splits `HOST:PORT` / `[V6]:PORT`; nil when it is not of that form.
    public static func split(_ text: String) -> (host: String, port: Int)? {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !portPart.isEmpty, portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber),
              let port = Int(portPart), (0...65535).contains(port) else { return nil }
        return (String(hostPart), port)
    }

    /// True for the addresses that mean "every interface" (no `iface` for lws).
    static func isWildcard(_ host: String) -> Bool { host.isEmpty || host == "0.0.0.0" || host == "::" }

    /// Resolves `host` to one numeric address: numeric addresses as they are, a name through
    /// the resolver (IPv4 preferred, as `localhost` is 127.0.0.1 for every client). Throws a
    /// one-line reason, naming `flag`, when it does not resolve.
    public static func resolve(host: String, port: Int, flag: String = "--listen") throws -> ListenAddress {
        if isWildcard(host) { return ListenAddress(host: host.isEmpty ? "0.0.0.0" : host, port: port) }
        if let numeric = numericForm(host) { return ListenAddress(host: numeric, port: port) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw ListenError("\(flag): \(host) does not resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var found: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let text = numericHost(address, length: current.pointee.ai_addrlen) {
                found.append(text)
            }
            entry = current.pointee.ai_next
        }
        guard let chosen = found.first(where: { !$0.contains(":") }) ?? found.first else {
            throw ListenError("\(flag): \(host) has no address")
        }
        return ListenAddress(host: chosen, port: port)
    }

    /// Why this address cannot be bound, in an operator's words: the kernel's answer to a
    /// socket bound to it the way lws binds (`SO_REUSEADDR`), asked after lws failed, whose
    /// own lines saying so go to the debug log. Nil when it binds (the trouble was elsewhere)
    /// or the question cannot be put (`host` not numeric, no socket).
    public func bindProblem() -> String? {
        let isV6 = host.contains(":")
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        // The bind's errno, read at once: nothing may run between the call and the read.
        let failure: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
            failure = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 ? 0 : errno }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
            failure = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 ? 0 : errno }
            }
        }
        guard failure != 0 else { return nil }
        switch failure {
        case EADDRINUSE: return "the port is in use"
        case EADDRNOTAVAIL: return "the address is not one of this machine's"
        case EACCES: return "ports below 1024 need privileges"
        case let code: return String(cString: strerror(code))
        }
    }

    /// `host` as a canonical numeric address, or nil when it is not one.
    static func numericForm(_ host: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return host }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return host }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }

    private static func numericHost(_ address: UnsafeMutablePointer<sockaddr>, length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A `--listen` value that cannot be used.
public struct ListenError: Error, CustomStringConvertible {
    /// One line naming `--listen`'s host and why: it does not resolve, or has no address.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
