import Foundation
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// What runs on the service thread at each wake-up (at least every 5 ms): the ramp, due
/// fixes or publishes, churn, fleet pans, the live line, and progress for the main thread.
extension LoadRun {
    func serviceTurn(now: Int64) {
        let state = control.withLock { $0 }
        if state.stopping { return }
        openDueConnections(now: now)
        if now >= measureEnd && counters.openAtWindowEnd < 0 { counters.openAtWindowEnd = counters.open }
        if !state.stopSending {
            sendDue(now: now)
            churn(now: now)
        }
        for f in fleetViewers.indices where fleetViewers[f].isOpen && now >= fleetViewers[f].nextPan && !state.stopSending {
            pan(f, now: now)
        }
        flushOutbox()
        if options.live && now - lastLive >= 1_000_000 { liveLine(now: now) }
        var endedMissing = -1
        if state.endingTrips && now - lastEndedCheck >= 50_000 {
            lastEndedCheck = now
            endedMissing = countEndedMissing()
        }
        let unacked = trips.reduce(0) { $0 + $1.unacked }
        let open = counters.open
        let frames = counters.frames + counters.segments
        progress.withLock { p in
            p.unacked = unacked
            p.open = open
            p.frames = frames
            if endedMissing >= 0 { p.endedMissing = endedMissing } else if !state.endingTrips { p.endedMissing = Int.max }
        }
    }

    private func sendDue(now: Int64) {
        for t in trips.indices where trips[t].isOpen && trips[t].created && trips[t].nextDue <= now {
            guard let id = trips[t].connection else { continue }
            let interval = trips[t].askedMicros > 0 ? trips[t].askedMicros : sendIntervalMicros
            if options.target == .nchan {
                publish(t, id, now: now)
            } else {
                sendFix(t, id, now: now, interval: interval)
            }
            // A fixed schedule; after a stall, skip ahead rather than burst.
            trips[t].nextDue += interval
            if trips[t].nextDue < now - interval { trips[t].nextDue = now + interval }
        }
    }

    /// One fix, `interval` (µs) of driving after the previous one (the first at the start).
    private func sendFix(_ t: Int, _ id: ConnectionID, now: Int64, interval: Int64) {
        let seq = trips[t].nextSeq
        trips[t].nextSeq += 1
        let route = routes[trips[t].route]
        if seq > 1 { trips[t].drivenS += Double(interval) / 1_000_000 }
        trips[t].lastSentAt = now
        let p = route.point(at: trips[t].startM + options.speedMps * trips[t].drivenS)
        var ts = now / 1000
        if ts <= trips[t].lastTs { ts = trips[t].lastTs + 1 }
        trips[t].lastTs = ts
        let slot = Int(seq % 128)
        trips[t].sentSeq[slot] = seq
        trips[t].sentAt[slot] = now
        trips[t].unacked += 1
        counters.fixesSent += 1
        if now >= measureStart && now < measureEnd { counters.windowFixes += 1 }
        let fix = FixInput(
            lat: p.lat, lon: p.lon, ts: ts, seq: seq, durationMs: Double(interval / 1000), speedMps: options.speedMps,
            accuracyM: 5)
        send(id, message: ClientMessages.fix(trip: trips[t].id, fix, id: .integer(seq), headroom: OutboundMessage.headroom))
    }

    /// Nchan: one frame-shaped message of `--message-size` bytes, stamped with its send time.
    private func publish(_ t: Int, _ id: ConnectionID, now: Int64) {
        let seq = trips[t].nextSeq
        trips[t].nextSeq += 1
        var text = #"{"type":"frame","trip":"\#(trips[t].id)","seq":\#(seq),"t":\#(now / 1000),"tu":\#(now),"pad":""#
        let padding = max(0, options.messageSize - text.utf8.count - 2)
        text += String(repeating: "x", count: padding) + #""}"#
        counters.fixesSent += 1
        if now >= measureStart && now < measureEnd { counters.windowFixes += 1 }
        send(id, text)
    }

    /// A fleet viewer's viewport: centred on a point of a route that moves on at each pan.
    func pan(_ f: Int, now: Int64) {
        guard let id = fleetViewers[f].connection, options.target == .trackhub else { return }
        let zoom = fleetViewers[f].zoom
        let route = routes[fleetViewers[f].step % routes.count]
        let step = fleetViewers[f].step
        let centre = route.point(at: route.length * Double((step * 7) % 20) / 20)
        let width = min(360, 1440 / pow(2, Double(zoom)))
        let height = min(170, width / 2)
        let south = max(-85, centre.lat - height / 2), north = min(85, centre.lat + height / 2)
        let west = max(-180, centre.lon - width / 2), east = min(180, centre.lon + width / 2)
        fleetViewers[f].step += 1
        fleetViewers[f].requestID += 1
        fleetViewers[f].requestAt = now
        fleetViewers[f].nextPan = now + options.panIntervalMs * 1000
        let viewport = Viewport(west: west, south: south, east: east, north: north, zoom: zoom)
        send(id, message: ClientMessages.viewport(viewport, id: .integer(fleetViewers[f].requestID), headroom: OutboundMessage.headroom))
    }

    /// Subscribed connections of created trips that have not yet seen their trip's `ended`.
    private func countEndedMissing() -> Int {
        var missing = 0
        for v in viewers where v.isOpen && !v.endedSeen && trips[Int(v.trip)].created { missing += 1 }
        if options.courierSubscribe {
            for t in trips where t.isOpen && t.created && !t.endedSeen { missing += 1 }
        }
        return missing
    }

    private func liveLine(now: Int64) {
        let elapsed = Double(now - startAt) / 1_000_000
        let seconds = lastLive == 0 ? 1 : Double(now - lastLive) / 1_000_000
        let phase = now < rampEnd ? "ramp" : now < measureStart ? "warmup" : now < measureEnd ? "measure" : "drain"
        let fixes = Double(counters.fixesSent - liveBase.fixes) / seconds
        let acks = Double(counters.acks - liveBase.acks) / seconds
        let frames = Double(counters.frames + counters.segments - liveBase.frames) / seconds
        liveBase = (counters.fixesSent, counters.acks, counters.frames + counters.segments, counters.viewerFrames)
        lastLive = now
        var line = String(format: "[%6.1fs %@] open %d/%d  fixes %.0f/s  acks %.0f/s  frames %.0f/s",
                          elapsed, phase, counters.open, plannedConnections, fixes, acks, frames)
        if let p50 = secondLatency.quantileMs(0.5), let p99 = secondLatency.quantileMs(0.99) {
            line += String(format: "  fix→frame p50 %.0f p99 %.0f ms", p50, p99)
        }
        secondLatency = LatencyHistogram()
        line += "  errors \(counters.errors)"
        if let pid = options.hubPID, let sample = ProcessProbe.sample(pid: pid) {
            if let previous = hubAtLive {
                line += String(format: "  hub %.0f%% %.0f MB", ProcessProbe.cpuPercent(previous, sample), Double(sample.rssBytes) / 1_048_576)
            }
            hubAtLive = sample
        }
        if let sample = ProcessProbe.sample(pid: getpid()) {
            if let previous = selfAtLive { line += String(format: "  gen %.0f%%", ProcessProbe.cpuPercent(previous, sample)) }
            selfAtLive = sample
        }
        if options.shardCount > 1 { line = "[\(options.shard)/\(options.shardCount)]" + line }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
