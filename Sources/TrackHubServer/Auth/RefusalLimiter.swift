import TrackHubProtocol

/// `--max-refusal-rate N` (PROTOCOL 1): how many times a second one address may be refused
/// for a bad credential (a 401, or a 404 for an unknown device on the phone endpoints)
/// before its requests that need a credential are answered 429 without being checked, so
/// device ids and tokens cannot be guessed at full speed. Off (nil rate) by default: behind
/// a proxy every client shares one address.
///
/// Each address has a bucket of `rate` refusals that refills at `rate` a second; a refusal
/// takes one; an address whose bucket is empty is blocked until it refills (after `1/rate`
/// s without refusals it may try again). One owner (the hub's service thread); pure, the
/// time is passed in.
///
/// Bounded: at most `maxAddresses` buckets. A full bucket is the same as none, so full ones
/// are dropped by `sweep`; past the bound the address that was refused longest ago is
/// dropped first (an attacker with more addresses than that can make one forgotten sooner,
/// which only gives that address its next attempt earlier).
struct RefusalLimiter {
    /// Refusals per second per address; nil: no limit.
    let rate: Double?
    let maxAddresses: Int
    private var buckets: [String: Bucket] = [:]

    private struct Bucket {
        var tokens: Double
        var at: Int64
    }

    init(ratePerSecond: Int?, maxAddresses: Int = 16_384) {
        self.rate = ratePerSecond.flatMap { $0 > 0 ? Double($0) : nil }
        self.maxAddresses = maxAddresses
    }

    /// Addresses with a bucket now (for tests and metrics).
    var trackedAddresses: Int { buckets.count }

    /// The 429 for an address that has used up its refusals (answered without checking its
    /// credential); nil: check it.
    func refusal(for address: String, now: Int64) -> ProtocolError? {
        guard isBlocked(address, now: now), let rate else { return nil }
        return .rateLimited("\(address): more than \(Int(rate)) refused credentials per second; try again later")
    }

    /// Counts an answer against its address if it refused a bad credential: every 401, and a
    /// 404 at a phone endpoint (an unknown device; PROTOCOL 1), refused upgrades included.
    mutating func recordAnswer(status: Int, atDeviceDoor: Bool, peer: String, now: Int64) {
        guard rate != nil, status == 401 || (status == 404 && atDeviceDoor) else { return }
        recordRefusal(peer, now: now)
    }

    /// True when `address` has used up its refusals: answer 429 without checking.
    func isBlocked(_ address: String, now: Int64) -> Bool {
        guard let rate, let bucket = buckets[address] else { return false }
        return refilled(bucket, rate: rate, now: now) < 1
    }

    /// One refusal of `address` for a bad credential.
    mutating func recordRefusal(_ address: String, now: Int64) {
        guard let rate else { return }
        if buckets[address] == nil && buckets.count >= maxAddresses {
            sweep(now: now)
            if buckets.count >= maxAddresses, let oldest = buckets.min(by: { $0.value.at < $1.value.at })?.key {
                buckets[oldest] = nil
            }
        }
        let tokens = buckets[address].map { refilled($0, rate: rate, now: now) } ?? rate
        buckets[address] = Bucket(tokens: max(0, tokens - 1), at: now)
    }

    /// Drops the buckets that have refilled: they say nothing a missing one does not.
    mutating func sweep(now: Int64) {
        guard let rate, !buckets.isEmpty else { return }
        buckets = buckets.filter { refilled($0.value, rate: rate, now: now) < rate }
    }

    private func refilled(_ bucket: Bucket, rate: Double, now: Int64) -> Double {
        min(rate, bucket.tokens + Double(max(0, now - bucket.at)) / 1000 * rate)
    }
}
