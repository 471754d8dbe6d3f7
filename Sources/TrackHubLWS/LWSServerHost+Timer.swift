import CLibWebSockets

/// The periodic timer on the service thread (an lws sorted-usec-list entry): `timerFired()`
/// on the delegate at a steady cadence, and the expiry of slow request bodies.
extension LWSServerHost {
    /// Starts a periodic timer (service thread): `timerFired()` every `intervalMicros`.
    public func startTimer(intervalMicros: Int64) {
        guard let context else { return }
        timerIntervalMicros = intervalMicros
        nextTimerDue = monotonicMicros() + intervalMicros
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        trackhub_timer_schedule(context, timer, lwsTimerCallback, intervalMicros)
    }

    fileprivate func timerDidFire() {
        guard let context, !destroyed else { return }
        // Schedule against the ideal cadence so ticks do not drift, skipping missed ones.
        let now = monotonicMicros()
        nextTimerDue += timerIntervalMicros
        if nextTimerDue <= now { nextTimerDue = now + timerIntervalMicros / 2 }
        trackhub_timer_schedule(context, timer, lwsTimerCallback, nextTimerDue - now)
        expireSlowBodies(now: now)
        delegate?.timerFired()
    }
}

private func lwsTimerCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = trackhub_timer_owner(sul) else { return }
    Unmanaged<LWSServerHost>.fromOpaque(owner).takeUnretainedValue().timerDidFire()
}
