/// Where Redis is: `redis://HOST:PORT` (the `--cluster` flag).
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

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

    public var description: String { "redis://\(host):\(port)" }
}
