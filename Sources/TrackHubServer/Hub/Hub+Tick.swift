import TrackHubCore
import TrackHubLWS

/// The tick (PROTOCOL 6.3): every moving trip's frame, encoded once, queued to each of its
/// frame-mode subscribers. Idle trips are not looked at.
extension Hub {
    func tick() {
        let started = systemMonotonicMicros()
        let now = clock.wallMillis()
        commands.advanceTrips(now: now)
        let elapsed = Double(systemMonotonicMicros() - started) / 1_000_000
        metrics.ticks += 1
        metrics.tickSecondsSum += elapsed
        metrics.tickSecondsLast = elapsed
        metrics.tickSecondsMax = max(metrics.tickSecondsMax, elapsed)

        fleet.tickIfDue(now: now)  // checked every wake-up: a tick starts on time, not up to 0.5 s late
        if now - lastStateFlush >= 100 {
            lastStateFlush = now
            storage.flushChangedTripStates()
        }
        if now - lastHousekeeping >= min(500, config.pingIntervalMs / 2) {
            let previousHousekeeping = lastHousekeeping  // for the once-a-minute retention check
            lastHousekeeping = now
            fanout.closeSlowReaders(now: now)
            fanout.sweepKeepalive(now: now)
            access.sweepTokens(now: now)
            commands.housekeeping(now: now)  // arrived trips end; the cluster's requests and snapshots
            purgeExpiredTripsIfDue(now: now, previous: previousHousekeeping)  // --retain-days (Hub+Retention)
            shares.forgetExpiredSharesIfDue(now: now)  // share links past their expiry (ShareService)
            access.refusals.sweep(now: now)  // --max-refusal-rate's buckets that have refilled
            routes.clients.sweepClosedPeers(host)  // searches whose clients left are dropped unrun
        }
    }

}
