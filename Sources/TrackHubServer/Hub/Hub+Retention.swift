import TrackHubStore

/// Retention (PROTOCOL 5, `--retain-days`): an ended trip is readable until `retainDays` after
/// it ended, then it is gone. Once a minute the hub asks a retaining store (SQLite) to delete
/// such trips; the store does it in small transactions on its writer thread, between the
/// hub's own batches, so it never stalls acks. The hub then forgets the trips it deleted.
extension Hub {
    /// Rows a purge transaction deletes at most.
    static let purgeBatchRows = 500

    func purgeExpiredTripsIfDue(now: Int64, previous: Int64) {
        guard now / 60_000 != previous / 60_000, let retaining = services.storage.store as? RetainingTripStore else { return }
        let cutoff = now - Int64(config.retainDays) * 86_400_000
        retaining.purgeEnded(before: cutoff, batch: Self.purgeBatchRows) { [self] ids in
            guard !ids.isEmpty else { return }
            services.inbox.run { [self] in
                for id in ids where services.trips[id]?.trip.status == .ended {
                    services.trips.remove(id)
                }
                webhookTripsForgotten(ids)
            }
        }
    }
}
