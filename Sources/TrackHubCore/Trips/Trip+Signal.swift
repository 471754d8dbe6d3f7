/// The courier's signal (PROTOCOL 18): last fix and battery, stale, and the events
/// `signal_lost`, `signal_back` and `battery_low`. Pure like the rest of the trip: the hub
/// passes its clock in, and decides when to ask (`SignalWatch` in the server).
extension Trip {
    /// When the last stored fix arrived (hub ms since the epoch); nil before the first.
    public var lastFixT: Int64? { signal?.lastFixT }

    /// The battery of the last stored fix that reported one, whole percent; nil until then.
    public var battery: Int? { signal?.battery }

    /// The median gap between the arrivals of the last 10 stored fixes, ms (10 s while the
    /// trip has had fewer than 2).
    public var usualFixIntervalMs: Int64 { signal?.usualIntervalMs ?? CourierSignal.defaultUsualIntervalMs }

    /// Whether the trip's status lets it be stale: `moving`, `holding` or `off_route`
    /// (never `pending`, `arrived` or `ended`).
    public var canBeStale: Bool {
        switch status {
        case .moving, .holding, .offRoute: true
        case .unknown, .pending, .arrived, .ended: false
        }
    }

    /// Whether the trip is stale now, as its snapshot and the fleet show it: `signal_lost`
    /// was sent for the current silence, and its status can be stale. Every hub of a
    /// cluster has the same answer (the event came from the log).
    public var isStale: Bool {
        guard canBeStale, let signal, let lost = signal.lostSilence else { return false }
        return lost == signal.lastFixT
    }

    /// How long a silence makes this trip stale in its current status, ms:
    /// `max(3 × usual interval, 2 × longest interval asked, floor)`, the floor being
    /// `--stale-after`, or 10 × that while `holding`.
    /// - Parameter longestAskedIntervalMs: the longest interval the hub asked of the courier
    ///   in the last 2 minutes (cadence); 0 when it asked none.
    public func staleThresholdMs(_ rule: StaleRule, longestAskedIntervalMs: Int64 = 0) -> Int64 {
        let floor = status == .holding ? rule.staleAfterMs * StaleRule.holdingFactor : rule.staleAfterMs
        return max(StaleRule.usualIntervalFactor * usualFixIntervalMs, StaleRule.askedIntervalFactor * longestAskedIntervalMs, floor)
    }

    /// The earliest the trip can become stale if no fix arrives: its last fix's arrival plus
    /// the threshold without any asked interval and with the floor of a moving trip, so a
    /// bound below the real moment whatever the status becomes and whatever the hub asks.
    /// Nil when there is nothing to wait for: no fix yet, ended, or this silence reported.
    public func earliestStaleAt(_ rule: StaleRule) -> Int64? {
        guard let signal, status != .ended, signal.lostSilence != signal.lastFixT else { return nil }
        return signal.lastFixT + max(StaleRule.usualIntervalFactor * usualFixIntervalMs, rule.staleAfterMs)
    }

    /// Notes a fix that was stored (applied or refused; never a `duplicate`), which
    /// arrived at `arrivedAt`; call it for each stored fix in arrival order, before applying
    /// it. Returns the events it causes, to send before any frame or segment of that fix:
    /// `signal_back` when `signal_lost` was sent for the silence it ends (not for an ended
    /// trip), then `battery_low` when it reports 15 % or less and none was sent since a fix
    /// last reported more than 20 %. `now` is the events' time.
    public mutating func noteStoredFix(_ fix: FixInput, arrivedAt: Int64, now: Int64) -> [TripEvent] {
        var events: [TripEvent] = []
        let isEnded = status == .ended
        // Taken out, so the arrivals array has one owner while it changes (no copy per fix).
        var noted: CourierSignal
        if var previous = signal {
            signal = nil
            let arrival = max(arrivedAt, previous.lastFixT)  // arrivals never go back
            if let lost = previous.lostSilence, lost == previous.lastFixT, !isEnded {
                events.append(makeEvent(.signalBack(gapMs: arrival - lost), now: now, position: marker(at: now)?.position))
            }
            previous.lostSilence = nil
            previous.lastFixT = arrival
            if previous.arrivals.count >= CourierSignal.arrivalsKept {
                previous.arrivals.removeFirst(previous.arrivals.count - CourierSignal.arrivalsKept + 1)
            }
            previous.arrivals.append(arrival)
            noted = previous
        } else {
            noted = CourierSignal(firstArrival: arrivedAt)
        }
        if let reported = fix.batteryPercent, reported.isFinite, (0...100).contains(reported) {
            let percent = Int(reported.rounded())
            noted.battery = percent
            if percent > CourierSignal.batteryRearmPercent {
                noted.batteryLowSent = false
            } else if percent <= CourierSignal.batteryLowPercent, !noted.batteryLowSent, !isEnded {
                noted.batteryLowSent = true
                events.append(makeEvent(.batteryLow(battery: percent), now: now, position: marker(at: now)?.position))
            }
        }
        signal = noted
        return events
    }

    /// `signal_lost`, if the trip became stale by `now`: its status can be stale, no fix
    /// has arrived for `staleThresholdMs`, and this silence has not been reported (not even
    /// before a restart). Nil otherwise. Marks the silence reported.
    public mutating func signalLost(now: Int64, rule: StaleRule, longestAskedIntervalMs: Int64 = 0) -> TripEvent? {
        guard let lastFixT, now - lastFixT >= staleThresholdMs(rule, longestAskedIntervalMs: longestAskedIntervalMs) else { return nil }
        return signalLost(now: now, silenceSince: lastFixT)
    }

    /// `signal_lost` for a silence judged elsewhere (a cluster: by the trip's partition
    /// owner, which found no fix since `silenceSince` for the trip's threshold): sent unless
    /// a fix arrived since (a fix that came in between wins), the status cannot be stale, or
    /// this silence was reported already. Every hub applying the owner's command at the same
    /// log time decides alike. Marks the silence reported.
    public mutating func signalLost(now: Int64, silenceSince: Int64) -> TripEvent? {
        guard canBeStale, var noted = signal, noted.lastFixT == silenceSince, noted.lostSilence != silenceSince else { return nil }
        noted.lostSilence = silenceSince
        signal = noted
        return makeEvent(.signalLost(lastFixT: silenceSince, battery: noted.battery), now: now, position: marker(at: now)?.position)
    }
}
