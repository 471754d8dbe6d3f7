/// Where the delivery positions of the webhook URLs are kept (PROTOCOL 12): the hub's own
/// store on a hub alone (`StoreWebhookPositions`), Redis in cluster mode
/// (`RedisWebhookPositions`). Used only on the webhook thread.
protocol WebhookPositionKeeper: AnyObject {
    /// Each URL's positions (trip → last event done). A URL seen for the first time starts
    /// at `lastEvents` (history is not sent) and is remembered from now on.
    func load(urls: [String], lastEvents: [String: Int], now: Int64) throws(WebhookError) -> [String: [String: Int]]
    /// Stores positions; `failed` runs (on any thread) when they could not be written.
    func write(_ positions: [String: [String: Int]], failed: @escaping @Sendable () -> Void)
    /// Forgets the positions of deleted trips.
    func forget(trips: [String], urls: [String])
}
