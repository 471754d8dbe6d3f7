/// What the webhook deliverer keeps durably (PROTOCOL 12): for each URL, how far each trip's
/// events have been delivered. Written through the store's ordinary batches, so they ride
/// the same group commit as fixes and never need a second writer.
public enum WebhookRecord: Sendable, Equatable {
    /// A URL is delivered to from now on; `positions` are where each existing trip starts
    /// (its last event: history before the URL was configured is not sent).
    case target(url: String, addedAt: Int64, positions: [String: Int])
    /// Every event of `trip` up to `delivered` (its `n`) is done for `url`: delivered,
    /// skipped by `--webhook-events`, or dropped after 24 h.
    case position(url: String, trip: String, delivered: Int)
    /// Forgets a trip's positions for every URL (the trip is gone).
    case forgetTrip(trip: String)
}
