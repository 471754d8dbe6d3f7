import TrackHubStore

/// Positions in the hub's store, written through its ordinary batches (group commit with the
/// fixes; no second writer), read once at start-up.
final class StoreWebhookPositions: WebhookPositionKeeper {
    private let store: TripStore

    init(store: TripStore) { self.store = store }

    func load(urls: [String], lastEvents: [String: Int], now: Int64) throws(WebhookError) -> [String: [String: Int]] {
        let state: WebhookStoredState
        do {
            state = try (store as? WebhookPositionStore)?.loadWebhookState() ?? WebhookStoredState()
        } catch {
            throw .store("cannot read the delivery positions: \(error)")
        }
        var records: [StoreRecord] = []
        var result: [String: [String: Int]] = [:]
        for url in urls {
            if state.targets[url] == nil {
                result[url] = lastEvents
                records.append(.webhook(.target(url: url, addedAt: now, positions: lastEvents)))
            } else {
                result[url] = state.positions[url] ?? [:]
            }
        }
        // Trips the store no longer has (deleted while the hub was down).
        let gone = Set(state.positions.values.flatMap(\.keys)).subtracting(lastEvents.keys)
        records += gone.sorted().map { .webhook(.forgetTrip(trip: $0)) }
        if !records.isEmpty { store.append(records) { _ in } }
        return result
    }

    func write(_ positions: [String: [String: Int]], failed: @escaping @Sendable () -> Void) {
        var records: [StoreRecord] = []
        for (url, trips) in positions {
            for (trip, n) in trips { records.append(.webhook(.position(url: url, trip: trip, delivered: n))) }
        }
        guard !records.isEmpty else { return }
        store.append(records) { result in
            if case .failure = result { failed() }
        }
    }

    func forget(trips: [String], urls: [String]) {
        store.append(trips.map { .webhook(.forgetTrip(trip: $0)) }) { _ in }
    }
}
