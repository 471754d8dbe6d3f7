/// A Prometheus histogram of durations in milliseconds (rendered in seconds), fixed buckets:
/// constant memory, one array increment per observation.
struct LatencyHistogramMetric {
    static let boundsMs: [Int64] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
    private(set) var counts = Array(repeating: 0, count: LatencyHistogramMetric.boundsMs.count + 1)
    private(set) var sumMs: Int64 = 0
    private(set) var total = 0

    /// `count`: how many observations of this same duration (a batch of fixes acked together).
    mutating func observe(ms: Int64, count: Int = 1) {
        guard count > 0 else { return }
        let value = max(0, ms)
        var i = 0
        while i < Self.boundsMs.count && value > Self.boundsMs[i] { i += 1 }
        counts[i] += count
        sumMs += value * Int64(count)
        total += count
    }

    func render(_ name: String, help: String) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        var cumulative = 0
        for (i, bound) in Self.boundsMs.enumerated() {
            cumulative += counts[i]
            out += "\(name)_bucket{le=\"\(Double(bound) / 1000)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{le=\"+Inf\"} \(total)\n\(name)_sum \(Double(sumMs) / 1000)\n\(name)_count \(total)\n"
        return out
    }
}
