import CSQLite

/// The webhook tables' writes (PROTOCOL 12), on the writer thread inside the batch's
/// transaction (`SQLiteWriter.commit`). Tables: `SQLiteTripStore.webhookTables`.
final class SQLiteWebhookWrites {
    private let insertTarget: SQLiteStatement
    private let upsertPosition: SQLiteStatement
    private let forgetTrip: SQLiteStatement

    init(db: SQLiteConnection) throws(SQLiteError) {
        insertTarget = try db.prepare("INSERT OR IGNORE INTO webhook_targets(url, added_at) VALUES(?1, ?2)")
        // A position only moves forward: a late write of an older one changes nothing.
        upsertPosition = try db.prepare("""
            INSERT INTO webhook_positions(url, trip, delivered) VALUES(?1, ?2, ?3)
            ON CONFLICT(url, trip) DO UPDATE SET delivered = max(delivered, excluded.delivered)
            """)
        forgetTrip = try db.prepare("DELETE FROM webhook_positions WHERE trip = ?1")
    }

    func write(_ record: WebhookRecord) throws(SQLiteError) {
        switch record {
        case .target(let url, let addedAt, let positions):
            insertTarget.bind(1, url)
            insertTarget.bind(2, addedAt)
            try insertTarget.run()
            for (trip, n) in positions { try position(url: url, trip: trip, delivered: n) }
        case .position(let url, let trip, let delivered):
            try position(url: url, trip: trip, delivered: delivered)
        case .forgetTrip(let trip):
            forgetTrip.bind(1, trip)
            try forgetTrip.run()
        }
    }

    private func position(url: String, trip: String, delivered: Int) throws(SQLiteError) {
        upsertPosition.bind(1, url)
        upsertPosition.bind(2, trip)
        upsertPosition.bind(3, delivered)
        try upsertPosition.run()
    }
}
