/// The webhook lines of `/metrics` (PROTOCOL 12), labelled by each URL's scheme, host, port
/// and place in the `--webhook` list (`https://hooks.example.com:443#2`): `/metrics` is
/// public, and a URL's userinfo, path and query may hold a secret (`urlLabel`).
enum WebhookMetrics {
    struct URLState: Equatable {
        var url: String
        var delivered: Int
        var failed: Int
        var dropped: Int
        var pending: Int
        var oldestPendingMs: Int64
    }

    /// - Parameter partitionsDelivered: cluster mode: how many partitions' webhooks this node
    /// delivers (it owns them; nil on a hub alone).
    static func render(_ urls: [URLState], partitionsDelivered: Int? = nil) -> String {
        guard !urls.isEmpty else { return "" }
        var out = """
        # HELP trackhub_webhook_deliveries_total Webhook attempts by URL and result: ok (2xx within 10 s), failed (any other attempt; retried), dropped (an event given up after 24 h).
        # TYPE trackhub_webhook_deliveries_total counter

        """
        for (place, state) in urls.enumerated() {
            let url = urlLabel(state.url, place: place + 1)
            out += "trackhub_webhook_deliveries_total{url=\"\(url)\",result=\"ok\"} \(state.delivered)\n"
            out += "trackhub_webhook_deliveries_total{url=\"\(url)\",result=\"failed\"} \(state.failed)\n"
            out += "trackhub_webhook_deliveries_total{url=\"\(url)\",result=\"dropped\"} \(state.dropped)\n"
        }
        out += "# HELP trackhub_webhook_pending Events not yet delivered (or skipped, or dropped) to the URL.\n# TYPE trackhub_webhook_pending gauge\n"
        for (place, state) in urls.enumerated() { out += "trackhub_webhook_pending{url=\"\(urlLabel(state.url, place: place + 1))\"} \(state.pending)\n" }
        out += "# HELP trackhub_webhook_oldest_pending_seconds How long the oldest undelivered event of the URL has waited (0: none).\n# TYPE trackhub_webhook_oldest_pending_seconds gauge\n"
        for (place, state) in urls.enumerated() {
            out += "trackhub_webhook_oldest_pending_seconds{url=\"\(urlLabel(state.url, place: place + 1))\"} \(PrometheusText.format(Double(state.oldestPendingMs) / 1000))\n"
        }
        if let partitionsDelivered {
            out += "# HELP trackhub_webhook_partitions_delivered Cluster mode: partitions whose webhooks this node delivers (it owns them).\n# TYPE trackhub_webhook_partitions_delivered gauge\n"
            out += "trackhub_webhook_partitions_delivered \(partitionsDelivered)\n"
        }
        return out
    }

    /// The `url` label of PROTOCOL 12: the URL's scheme, host and port (the scheme's default
    /// when none is written), then `#` and its 1-based place in the `--webhook` list. The
    /// userinfo, path, query and fragment are left out: any of them may hold a credential.
    static func urlLabel(_ url: String, place: Int) -> String {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return "#\(place)" }
        let scheme = parts[0].lowercased()
        var authority = parts[1].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = Substring(authority)
        var port: Substring = ""
        if host.hasPrefix("[") {
            // An IPv6 literal: the port, if any, follows the closing bracket.
            if let close = host.firstIndex(of: "]") {
                let after = host[host.index(after: close)...]
                host = host[...close]
                if after.hasPrefix(":") { port = after.dropFirst() }
            }
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        if port.isEmpty { port = scheme == "https" ? "443" : scheme == "http" ? "80" : "" }
        let hostPort = port.isEmpty ? String(host) : "\(host):\(port)"
        return label("\(scheme)://\(hostPort.lowercased())#\(place)")
    }

    /// A label value in the Prometheus text format: `\`, `"` and newlines escaped.
    static func label(_ value: String) -> String {
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
