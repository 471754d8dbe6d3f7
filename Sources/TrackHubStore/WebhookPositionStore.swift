/// A store that keeps webhook delivery positions (the SQLite and in-memory stores).
public protocol WebhookPositionStore: AnyObject, Sendable {
    /// Every URL and position stored (`.webhook` records appended so far).
    func loadWebhookState() throws(StoreError) -> WebhookStoredState
}
