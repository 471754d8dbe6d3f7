import TrackHubCore
import TrackHubLWS

/// The tick (PROTOCOL 6.3): every moving trip's frame, encoded once, queued to each of its
/// frame-mode subscribers. Idle trips are not looked at.
extension Hub {
    func tick() {
        let started = systemMonotonicMicros()
        let now = services.clock.wallMillis()
        commands.advanceTrips(now: now)
        let elapsed = Double(systemMonotonicMicros() - started) / 1_000_000
        services.metrics.ticks += 1
        services.metrics.tickSecondsSum += elapsed
        services.metrics.tickSecondsLast = elapsed
        services.metrics.tickSecondsMax = max(services.metrics.tickSecondsMax, elapsed)

        services.fleet.tickIfDue(now: now)  // checked every wake-up: a tick starts on time, not up to 0.5 s late
        if now - loopTimes.lastStateFlush >= 100 {
            loopTimes.lastStateFlush = now
            services.storage.startStateRound()
        }
        services.storage.writeSomeTripStates()  // a slice per sub-tick: fixes do not wait behind one big batch
        if now - loopTimes.lastHousekeeping >= min(500, config.pingIntervalMs / 2) {
            let previousHousekeeping = loopTimes.lastHousekeeping  // for the once-a-minute retention check
            loopTimes.lastHousekeeping = now
            services.fanout.closeSlowReaders(now: now)
            services.fanout.sweepKeepalive(now: now)
            services.access.sweepTokens(now: now)
            commands.housekeeping(now: now)  // arrived trips end; the cluster's requests and snapshots
            services.publisher.stopLinks.sweep(now: now)  // `stop` messages due without a frame (PROTOCOL 17)
            services.signals.check(now: now)  // couriers silent past their threshold: signal_lost (PROTOCOL 18)
            purgeExpiredTripsIfDue(now: now, previous: previousHousekeeping)  // --retain-days (Hub+Retention)
            services.shares.forgetExpiredSharesIfDue(now: now)  // share links past their expiry (ShareService)
            services.access.refusals.sweep(now: now)  // --max-refusal-rate's buckets that have refilled
            services.cadence.housekeeping(now: now)  // other hubs' watched trips (a cluster); asked intervals aged out
            services.routes.clients.sweepClosedPeers(services.host)  // searches whose clients left are dropped unrun
        }
    }

}
