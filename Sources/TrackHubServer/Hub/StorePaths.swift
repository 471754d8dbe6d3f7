import TrackHubStore

/// The trip store as the services reach it (`TripsAPI`, `ShareService`): reads on the
/// store-read queue and batches appended by the store writer, each answered on the service
/// thread and counted so the drain waits for them. The hub plays it (Hub+Fixes) while those
/// counts are its own; a service holds it weakly, since the hub owns the service.
protocol StorePaths: AnyObject {
    /// Runs `read` on the store-read queue and `then` with its result on the service thread.
    /// `holdsDrain`: the drain waits for it (see `Hub.readFromStore`).
    func readFromStore<Value: Sendable>(
        _ read: @escaping @Sendable (TripStore) throws(StoreError) -> Value,
        holdsDrain: Bool,
        then: @escaping @Sendable (Result<Value, StoreError>) -> Void)
    /// Appends a batch to the store; `then` runs on the service thread once it committed or failed.
    func persist(_ records: [StoreRecord], then: @escaping @Sendable (Result<Void, StoreError>) -> Void)
}

extension StorePaths {
    /// A read the drain waits for (every read but a streamed trail's later pages).
    func readFromStore<Value: Sendable>(
        _ read: @escaping @Sendable (TripStore) throws(StoreError) -> Value,
        then: @escaping @Sendable (Result<Value, StoreError>) -> Void
    ) {
        readFromStore(read, holdsDrain: true, then: then)
    }
}

/// The hub's own reads and batches (Hub+Fixes) are the services' store paths.
extension Hub: StorePaths {}
