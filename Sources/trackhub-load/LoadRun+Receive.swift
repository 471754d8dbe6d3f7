import TrackHubLWS
import TrackHubProtocol

/// Reading what arrives, cheaply: TrackHubProtocol's `ServerMessage` reads the type, then only
/// the fields measured, in place (no tree, no allocation). Latency is defined in
/// docs/load-testing.md.
extension LoadRun {
    func received(_ id: ConnectionID, _ message: [UInt8]) {
        let now = wallMicros()
        let raw = Int(id.raw)
        guard raw < owners.count else { return }
        counters.messages += 1
        counters.bytes += message.count
        let inWindow = now >= measureStart && now < measureEnd
        if inWindow { counters.windowBytes += message.count }
        let scan = ServerMessage(message)
        switch owners[raw] {
        case .courier(let t): courierReceived(Int(t), scan, now: now, inWindow: inWindow)
        case .viewer(let v): viewerReceived(Int(v), scan, now: now, inWindow: inWindow)
        case .fleet(let f): fleetReceived(Int(f), scan, now: now, inWindow: inWindow)
        case .idle, .none: break
        }
    }

    private func countError(_ scan: ServerMessage) {
        counters.errorReplies[scan.string("code") ?? "unknown", default: 0] += 1
    }

    private func courierReceived(_ t: Int, _ scan: ServerMessage, now: Int64, inWindow: Bool) {
        if options.target == .nchan {
            counters.publishReplies += 1
            if inWindow { counters.windowAcks += 1 }
            return
        }
        switch scan.type {
        case .ack:
            let (seqValue, applied) = scan.members("seq", "applied")
            guard let seq = seqValue?.int else { return }
            counters.acks += 1
            if inWindow { counters.windowAcks += 1 }
            trips[t].unacked -= 1
            let slot = Int(seq % 128)
            guard trips[t].sentSeq[slot] == seq else { return }
            let sentAt = trips[t].sentAt[slot]
            if sentAt >= measureStart && sentAt < measureEnd { counters.ackLatency.record(now - sentAt) }
            if applied?.bool == true {
                counters.acksApplied += 1
                trips[t].applied += 1
                trips[t].awaitingFrame.append(sentAt)
                // A segment-mode subscriber gets one segment per applied fix: segment seq n
                // is the n-th applied fix of the trip.
                trips[t].segmentMarks.append(threshold: trips[t].applied, sentAt: sentAt)
                resolveViewers(ofTrip: t, segments: true)
            } else {
                counters.acksNotApplied += 1
            }
        case .frame:
            // One walk for both: the frame's `t` follows its `seq`.
            let (seqValue, stamp) = scan.members("seq", "t")
            guard let seq = seqValue?.int else { return }
            counters.frames += 1
            if inWindow { counters.windowFrames += 1 }
            if inWindow, let ft = stamp?.int { counters.delivery.record(now - ft * 1000) }
            // The first frame after an ack on the courier's own connection is the first
            // one computed after that fix was committed (the hub queues the ack, then the
            // next tick's frame, on this connection in that order).
            if !trips[t].awaitingFrame.isEmpty {
                for sentAt in trips[t].awaitingFrame { trips[t].frameMarks.append(threshold: seq, sentAt: sentAt) }
                trips[t].awaitingFrame.removeAll(keepingCapacity: true)
                resolveViewers(ofTrip: t, segments: false)
            }
        case .event:
            counters.events += 1
            if scan.string("name", is: "ended") { trips[t].endedSeen = true }
        case .error:
            countError(scan)
            // An error answering a fix (its id is the fix's seq, ≥ 1) ends its wait for an ack.
            if let re = scan.int("re"), re >= 1 { trips[t].unacked -= 1 }
        case .snapshot:
            counters.snapshots += 1
        case .cadence:
            followCadence(t, scan, now: now)
        default:
            break
        }
    }

    /// PROTOCOL 18: the hub asks for a fix every `interval_ms`; the next one goes that long
    /// after the last (at once if that is past), and the interval holds until asked otherwise.
    private func followCadence(_ t: Int, _ scan: ServerMessage, now: Int64) {
        counters.cadences += 1
        guard options.followCadence, let ms = scan.int("interval_ms"), ms > 0 else { return }
        trips[t].askedMicros = ms * 1000
        if trips[t].lastSentAt > 0 { trips[t].nextDue = max(now, trips[t].lastSentAt + ms * 1000) }
    }

    private func viewerReceived(_ v: Int, _ scan: ServerMessage, now: Int64, inWindow: Bool) {
        let kind = scan.type
        switch kind {
        case .frame, .segment:
            // One walk for both: a frame's `t` (a segment's `t0`) follows its `seq`.
            let (seqValue, stampValue) = kind == .frame ? scan.members("seq", "t") : scan.members("seq", "t0")
            guard let seq = seqValue?.int else { return }
            let stamp = stampValue?.int
            if kind == .frame {
                counters.frames += 1
                counters.viewerFrames += 1
                if inWindow {
                    counters.windowFrames += 1
                    counters.windowViewerFrames += 1
                }
            } else {
                counters.segments += 1
                if inWindow { counters.windowSegments += 1 }
            }
            if options.target == .nchan {
                // Nchan: the message (trackhub-load's own, LoadRun+Schedule) carries its publish
                // time in microseconds, `tu`.
                if let sentAt = scan.int("tu"), sentAt >= measureStart, sentAt < measureEnd {
                    counters.fixToFrame.record(now - sentAt)
                    secondLatency.record(now - sentAt)
                }
                if inWindow, let ft = stamp { counters.delivery.record(now - ft * 1000) }
                return
            }
            if kind == .frame, inWindow, let ft = stamp { counters.delivery.record(now - ft * 1000) }
            if viewers[v].stopLink >= 0 { counters.stopLinkFrames += 1 }
            viewers[v].recent.push(seq: seq, at: now)
            if viewers[v].firstSeq < 0 { viewers[v].firstSeq = seq }
            resolve(viewer: v)
        case .snapshot:
            counters.snapshots += 1
        case .event:
            counters.events += 1
            if scan.string("name", is: "ended") { viewers[v].endedSeen = true }
        case .stop:
            stopMessage(v, scan)
        case .unsubscribed:
            // A stop link ends at its stop (`arrived`) or with it (`stop_removed`): it will
            // not see the trip's `ended`.
            viewers[v].endedSeen = true
        case .error:
            countError(scan)
        default:
            break
        }
    }

    private func fleetReceived(_ f: Int, _ scan: ServerMessage, now: Int64, inWindow: Bool) {
        switch scan.type {
        case .clusters:
            counters.clusters += 1
            if inWindow { counters.windowClusters += 1 }
            // The first answer to a viewport carries its `re`; a fleet tick's update does not.
            if let re = scan.int("re") {
                if re == fleetViewers[f].requestID, inWindow { counters.viewportReply.record(now - fleetViewers[f].requestAt) }
            } else if inWindow, let t = scan.int("t") {
                counters.clustersDelay.record(now - t * 1000)
            }
        case .error:
            countError(scan)
        default:
            break
        }
    }

    func resolveViewers(ofTrip t: Int, segments: Bool) {
        for v in trips[t].viewers where viewers[Int(v)].segments == segments && viewers[Int(v)].isOpen {
            resolve(viewer: Int(v))
        }
    }

    /// Turns the trip's marks into latency samples for one viewer: for each mark, the first
    /// frame (segment) this viewer received with seq ≥ the mark's threshold.
    func resolve(viewer v: Int) {
        let t = Int(viewers[v].trip)
        let segments = viewers[v].segments
        let log = segments ? trips[t].segmentMarks : trips[t].frameMarks
        // A stop link while the courier is hidden from it gets no frame: the fixes sent
        // meanwhile are not its to show (`stopMessage` starts its stream again when shown).
        if viewers[v].stopLink >= 0 && !viewers[v].shown {
            viewers[v].nextMark = log.count
            return
        }
        while viewers[v].nextMark < log.count {
            guard let mark = log.mark(viewers[v].nextMark) else {
                counters.latencyLost += 1
                viewers[v].nextMark += 1
                continue
            }
            // Marks for frames from before this subscription's first one are not this viewer's.
            if viewers[v].firstSeq < 0 { return }
            if mark.threshold < viewers[v].firstSeq {
                viewers[v].nextMark += 1
                continue
            }
            switch viewers[v].recent.firstAtLeast(mark.threshold) {
            case .notYet:
                return
            case .lost:
                counters.latencyLost += 1
            case .found(let receivedAt):
                if mark.sentAt >= measureStart && mark.sentAt < measureEnd {
                    let latency = receivedAt - mark.sentAt
                    if segments {
                        counters.fixToSegment.record(latency)
                    } else {
                        counters.fixToFrame.record(latency)
                        secondLatency.record(latency)
                    }
                }
            }
            viewers[v].nextMark += 1
        }
    }
}
