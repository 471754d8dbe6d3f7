/// The webhook lines of `/metrics` (PROTOCOL 12), labelled by URL as configured.
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
        for state in urls {
            let url = label(state.url)
            out += "trackhub_webhook_deliveries_total{url=\"\(url)\",result=\"ok\"} \(state.delivered)\n"
            out += "trackhub_webhook_deliveries_total{url=\"\(url)\",result=\"failed\"} \(state.failed)\n"
            out += "trackhub_webhook_deliveries_total{url=\"\(url)\",result=\"dropped\"} \(state.dropped)\n"
        }
        out += "# HELP trackhub_webhook_pending Events not yet delivered (or skipped, or dropped) to the URL.\n# TYPE trackhub_webhook_pending gauge\n"
        for state in urls { out += "trackhub_webhook_pending{url=\"\(label(state.url))\"} \(state.pending)\n" }
        out += "# HELP trackhub_webhook_oldest_pending_seconds How long the oldest undelivered event of the URL has waited (0: none).\n# TYPE trackhub_webhook_oldest_pending_seconds gauge\n"
        for state in urls {
            out += "trackhub_webhook_oldest_pending_seconds{url=\"\(label(state.url))\"} \(PrometheusText.format(Double(state.oldestPendingMs) / 1000))\n"
        }
        if let partitionsDelivered {
            out += "# HELP trackhub_webhook_partitions_delivered Cluster mode: partitions whose webhooks this node delivers (it owns them).\n# TYPE trackhub_webhook_partitions_delivered gauge\n"
            out += "trackhub_webhook_partitions_delivered \(partitionsDelivered)\n"
        }
        return out
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
