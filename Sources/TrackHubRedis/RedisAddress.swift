import Foundation

/// Where Redis is: `redis://HOST:PORT` (the `--cluster` flag).
public struct RedisAddress: Sendable, Hashable, CustomStringConvertible {
    /// A host name or numeric address, as written (IPv6 without brackets).
    public var host: String
    /// The TCP port, 1–65535 (Redis's default is 6379).
    public var port: Int

    /// An address as given; nothing is checked or resolved.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `redis://HOST:PORT` (port defaults to 6379). Returns nil for anything else.
    public init?(url: String) {
        let prefix = "redis://"
        guard url.hasPrefix(prefix) else { return nil }
        var rest = Substring(url.dropFirst(prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@") else { return nil }
        if let colon = rest.lastIndex(of: ":") {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            host = String(rest[..<colon])
            self.port = port
        } else {
            host = String(rest)
            port = 6379
        }
        if host.isEmpty { return nil }
    }

    /// `redis://HOST:PORT`, as `--cluster` takes it and errors name it.
    public var description: String { "redis://\(host):\(port)" }

    /// Parses `HOST:PORT` as a Redis Cluster node names itself (`MOVED 3999 127.0.0.1:7001`,
    /// `CLUSTER SLOTS`); an empty host is `defaultHost` (the node asked).
    public init?(node text: String, defaultHost: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
        else { return nil }
        let host = String(text[..<colon])
        self.init(host: host.isEmpty || host == "?" ? defaultHost : host, port: port)
    }

    /// Parses the `--cluster` value: one `redis://HOST:PORT`, or several separated by commas
    /// (the seeds of a Redis Cluster; any one that answers is enough). Nil if any is bad.
    public static func seeds(url: String) -> [RedisAddress]? {
        let parts = url.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        var seeds: [RedisAddress] = []
        for part in parts {
            guard let address = RedisAddress(url: part.hasPrefix("redis://") ? part : "redis://" + part) else { return nil }
            seeds.append(address)
        }
        return seeds.isEmpty ? nil : seeds
    }
}
