import TrackHubStore

/// The registered phones (PROTOCOL 11) as the command log applied them, and each one's
/// fix-rate bucket. One owner (`DeviceService`, on the service thread). A bucket exists only
/// for a registered device, so the buckets are bounded by the registrations, and forgetting
/// a device drops its bucket (a device registered again starts with a full one).
struct DeviceRegistry {
    private var devices: [String: StoredDevice] = [:]
    private var fixTokens: [String: (tokens: Double, at: Int64)] = [:]

    /// A device by id; setting nil forgets it and its bucket.
    subscript(id: String) -> StoredDevice? {
        get { devices[id] }
        set {
            devices[id] = newValue
            if newValue == nil { fixTokens[id] = nil }
        }
    }

    /// Every device, in no order.
    var all: Dictionary<String, StoredDevice>.Values { devices.values }

    /// Replaces every device (a restore, a snapshot); buckets of devices gone are dropped.
    mutating func replaceAll(with list: [StoredDevice]) {
        devices = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        fixTokens = fixTokens.filter { devices[$0.key] != nil }
    }

    /// Takes one fix token of a registered device (`ratePerSecond` fixes a second, bursts up
    /// to one second's worth); false when it is over its rate or not registered.
    mutating func takeFixToken(_ id: String, ratePerSecond: Int, now: Int64) -> Bool {
        guard devices[id] != nil else { return false }
        let rate = Double(max(1, ratePerSecond))
        var bucket = fixTokens[id] ?? (tokens: rate, at: now)
        bucket.tokens = min(rate, bucket.tokens + Double(max(0, now - bucket.at)) / 1000 * rate)
        bucket.at = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        fixTokens[id] = bucket
        return allowed
    }
}
