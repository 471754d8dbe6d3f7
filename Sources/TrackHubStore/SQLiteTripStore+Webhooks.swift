import CSQLite

extension SQLiteTripStore: WebhookPositionStore {
    /// The webhook tables (schema 3; PROTOCOL 12). Kept in a constant of their own so that
    /// another part of schema 3 can be added beside it in one migration.
    /// - `webhook_targets`: every URL ever configured and when (ms). A URL seen for the first
    ///   time starts at each trip's last event, so history is not sent to a new receiver.
    /// - `webhook_positions`: for each URL and trip, the last event `n` done (delivered,
    ///   skipped or dropped). What is after it in `events` is still to deliver: the events
    ///   table is the queue, so nothing is written twice and a crash loses nothing.
    static let webhookTables = """
    CREATE TABLE webhook_targets(url TEXT PRIMARY KEY, added_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE webhook_positions(
        url TEXT NOT NULL,
        trip TEXT NOT NULL,
        delivered INTEGER NOT NULL,
        PRIMARY KEY(url, trip)
    ) WITHOUT ROWID;
    """

    /// Reads both webhook tables through the read-only connection (start-up only).
    public func loadWebhookState() throws(StoreError) -> WebhookStoredState {
        try readWebhookState()
    }
}

extension SQLiteReader {
    /// Every webhook target and position.
    func webhookState() throws(SQLiteError) -> WebhookStoredState {
        var state = WebhookStoredState()
        let targets = try db.prepare("SELECT url, added_at FROM webhook_targets")
        while try targets.step() {
            if let url = targets.text(0) { state.targets[url] = targets.int64(1) }
        }
        let positions = try db.prepare("SELECT url, trip, delivered FROM webhook_positions")
        while try positions.step() {
            if let url = positions.text(0), let trip = positions.text(1) {
                state.positions[url, default: [:]][trip] = Int(positions.int64(2))
            }
        }
        return state
    }
}
