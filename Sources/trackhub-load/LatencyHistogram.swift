/// A log-linear histogram of durations in microseconds: exact below 128 µs, then 64 buckets
/// per power of two (at most 1.6 % error), so percentiles of millions of samples cost
/// nothing per sample. Histograms of several processes merge by adding buckets.
struct LatencyHistogram: Sendable {
    private static let linear = 128
    private static let perOctave = 64
    private(set) var buckets = [UInt64](repeating: 0, count: 128 + 40 * 64)
    private(set) var count: UInt64 = 0
    private(set) var maxMicros: Int64 = 0
    private(set) var sumMicros: Double = 0

    static func index(_ micros: Int64) -> Int {
        let v = UInt64(max(0, micros))
        if v < UInt64(linear) { return Int(v) }
        let msb = 63 - v.leadingZeroBitCount
        let shift = msb - 6
        let mantissa = Int(v >> UInt64(shift))
        return min(linear + (shift - 1) * perOctave + (mantissa - perOctave), 128 + 40 * 64 - 1)
    }

    /// The middle of a bucket, in microseconds.
    static func value(_ index: Int) -> Double {
        if index < linear { return Double(index) }
        let shift = (index - linear) / perOctave + 1
        let mantissa = (index - linear) % perOctave + perOctave
        let low = Double(mantissa << shift)
        return low + Double(1 << shift) / 2
    }

    @inline(__always)
    mutating func record(_ micros: Int64) {
        buckets[Self.index(micros)] &+= 1
        count &+= 1
        sumMicros += Double(max(0, micros))
        if micros > maxMicros { maxMicros = micros }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for i in buckets.indices { buckets[i] &+= other.buckets[i] }
        count &+= other.count
        sumMicros += other.sumMicros
        maxMicros = max(maxMicros, other.maxMicros)
    }

    /// The value at quantile q (0–1) in milliseconds; nil without samples.
    func quantileMs(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = UInt64((Double(count) * q).rounded(.up))
        var seen: UInt64 = 0
        for (i, n) in buckets.enumerated() where n > 0 {
            seen += n
            if seen >= max(rank, 1) { return min(Self.value(i), Double(maxMicros)) / 1000 }
        }
        return Double(maxMicros) / 1000
    }

    var maxMs: Double? { count > 0 ? Double(maxMicros) / 1000 : nil }
    var meanMs: Double? { count > 0 ? sumMicros / Double(count) / 1000 : nil }

    /// Non-empty buckets as `[[index, count], ...]`, for merging across processes.
    var sparse: [[Int]] { buckets.enumerated().compactMap { $0.element > 0 ? [$0.offset, Int($0.element)] : nil } }

    init() {}

    init(sparse: [[Int]], maxMicros: Int64, sumMicros: Double) {
        for pair in sparse where pair.count == 2 && pair[0] >= 0 && pair[0] < buckets.count {
            buckets[pair[0]] &+= UInt64(pair[1])
            count &+= UInt64(pair[1])
        }
        self.maxMicros = maxMicros
        self.sumMicros = sumMicros
    }
}
