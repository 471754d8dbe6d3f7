/// Which browsers and which `Host` names the hub answers (PROTOCOL 1). Pure: no sockets,
/// so every rule is a unit test.
struct OriginPolicy: Sendable {
    /// `--allow-origin` (`*`: any).
    var allowedOrigins: [String]
    /// `--allow-host`, lower-cased.
    var allowedHosts: [String]
    /// The address `--listen` binds, and its host part as written, lower-cased.
    var listenHost: String
    var listenName: String
    /// The scheme browsers use to reach this hub: `https` with TLS, else `http`.
    var scheme: String
    /// An open hub (no secret) checks `Host` against DNS rebinding; a secured one need not:
    /// a page on another name has no token.
    var checksHost: Bool

    init(config: HubConfig) {
        allowedOrigins = config.allowOrigins
        allowedHosts = config.allowHosts.map { $0.lowercased() }
        listenHost = config.listenHost.lowercased()
        listenName = (config.listenName ?? config.listenHost).lowercased()
        scheme = config.tlsCertPath == nil ? "http" : "https"
        checksHost = config.jwtSecret == nil
    }

    /// A browser's `Origin` must be this hub itself (scheme and authority: an `https://`
    /// page does not match a plain-HTTP hub) or be listed; requests without one are allowed.
    func allowsOrigin(_ origin: String?, host: String?) -> Bool {
        guard let origin, !origin.isEmpty else { return true }
        if allowedOrigins.contains("*") || allowedOrigins.contains(origin) { return true }
        guard let host, let separator = origin.range(of: "://") else { return false }
        let originScheme = origin[..<separator.lowerBound].lowercased()
        let authority = origin[separator.upperBound...].lowercased()
        return originScheme == scheme && authority == host.lowercased()
    }

    /// An open hub answers only a `Host` that is its listen address, `localhost`, a loopback
    /// address or an `--allow-host` name (any port). So a page whose name an attacker points
    /// at 127.0.0.1 (DNS rebinding) is refused: its `Host` is the attacker's name. A request
    /// without `Host` (HTTP/1.0 tools) is not from a browser and is allowed.
    func allowsHost(_ host: String?) -> Bool {
        guard checksHost, let host, !host.isEmpty else { return true }
        let name = Self.hostName(host)
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        if !name.isEmpty && (name == listenHost || name == listenName) { return true }
        if Self.isLoopback(name) { return true }
        return allowedHosts.contains(name)
    }

    /// The name of a `Host` value without its port, lower-cased, brackets kept off IPv6.
    static func hostName(_ host: String) -> String {
        let lowered = host.lowercased()
        if lowered.hasPrefix("[") {
            guard let close = lowered.firstIndex(of: "]") else { return lowered }
            return String(lowered[lowered.index(after: lowered.startIndex)..<close])
        }
        if let colon = lowered.lastIndex(of: ":"), lowered.firstIndex(of: ":") == colon {
            return String(lowered[..<colon])
        }
        return lowered
    }

    /// 127.0.0.0/8 written as a dotted quad, or `::1`.
    static func isLoopback(_ name: String) -> Bool {
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber) && Int(part).map { $0 <= 255 } == true
        }
    }
}
