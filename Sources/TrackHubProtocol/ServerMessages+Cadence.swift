import TrackHubCore

/// The `cadence` message of PROTOCOL 18: how often the hub wants a courier's fixes.
extension ServerMessages {
    /// `{"type":"cadence","trip":…,"interval_ms":…,"watched":…}`: sent to the connection that
    /// sends a trip's fixes when the interval the hub wants of it changes. Not a reply: it
    /// carries no `re`.
    /// - Parameters:
    ///   - trip: the trip whose fixes are asked for.
    ///   - intervalMs: the wanted time between two fixes, ms (`--cadence-watched` or `--cadence-idle`).
    ///   - watched: whether somebody follows the trip now.
    ///   - headroom: leading bytes left before the JSON.
    public static func cadence(trip: String, intervalMs: Int64, watched: Bool, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 80 + trip.utf8.count)
        w.beginObject()
        w.field("type", "cadence")
        w.field("trip", trip)
        w.field("interval_ms", intervalMs)
        w.field("watched", watched)
        w.endObject()
        return w.finish()
    }
}
