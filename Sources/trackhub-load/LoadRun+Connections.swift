import TrackHubLWS
import TrackHubProtocol

/// Opening connections over the ramp, what each sends once open, churn, and closes.
extension LoadRun {
    /// Where a connection of each kind goes.
    /// With `--partition-url`, a trip's connections go to its partition's hub.
    /// `token` (a stop link's) replaces `--token`.
    private func target(path: String, viewer: Int? = nil, trip: Int? = nil, token linkToken: String? = nil) -> WebSocketTarget {
        var fullPath = path
        if let token = linkToken ?? options.token { fullPath += (path.contains("?") ? "&" : "?") + "token=" + token }
        var endpoint = viewer.map { viewerEndpoints[$0 % viewerEndpoints.count] } ?? self.endpoint
        if let trip, !partitionEndpoints.isEmpty {
            endpoint = partitionEndpoints[TripPartition.of(trips[trip].id, partitions: partitionEndpoints.count)]
        }
        return WebSocketTarget(host: endpoint.host, port: endpoint.port, path: fullPath, useTLS: endpoint.secure,
                               offerSubprotocol: options.target == .trackhub)
    }

    private func register(_ id: ConnectionID, _ owner: Owner) {
        let raw = Int(id.raw)
        while owners.count <= raw {
            owners.append(.none)
            wasOpened.append(false)
        }
        owners[raw] = owner
        counters.attempted += 1
    }

    func openCourier(_ t: Int) {
        guard let host else { return }
        let path = options.target == .nchan ? "/pub/\(trips[t].id)" : "/v1/ws"
        let id = host.connect(target(path: path, trip: t))
        trips[t].connection = id
        register(id, .courier(Int32(t)))
    }

    func openViewer(_ v: Int) {
        guard let host else { return }
        let path = options.target == .nchan ? "/sub/\(trips[Int(viewers[v].trip)].id)" : "/v1/ws"
        let id = host.connect(target(path: path, viewer: v, trip: Int(viewers[v].trip), token: stopToken(ofViewer: v)))
        viewers[v].connection = id
        register(id, .viewer(Int32(v)))
    }

    /// Opens the connections due by now: evenly over the ramp, couriers first.
    func openDueConnections(now: Int64) {
        let total = plannedConnections
        guard nextToOpen < total, let host else { return }
        let ramp = max(1, rampEnd - startAt)
        let due = now >= rampEnd ? total : min(total, Int((Double(total) * Double(now - startAt) / Double(ramp)).rounded(.up)))
        while nextToOpen < due {
            var k = nextToOpen
            nextToOpen += 1
            if k < trips.count { openCourier(k); continue }
            k -= trips.count
            if k < viewers.count { openViewer(k); continue }
            k -= viewers.count
            if k < fleetViewers.count {
                let id = host.connect(target(path: "/v1/ws", viewer: k))
                fleetViewers[k].connection = id
                register(id, .fleet(Int32(k)))
                continue
            }
            k -= fleetViewers.count
            let id = host.connect(target(path: options.target == .nchan ? "/sub/idle" : "/v1/ws"))
            idle[k] = id
            register(id, .idle(Int32(k)))
        }
    }

    func connectionOpened(_ id: ConnectionID) {
        let raw = Int(id.raw)
        guard raw < owners.count else { return }
        wasOpened[raw] = true
        counters.opened += 1
        counters.open += 1
        counters.peakOpen = max(counters.peakOpen, counters.open)
        let now = wallMicros()
        switch owners[raw] {
        case .courier(let t):
            trips[Int(t)].isOpen = true
            if options.target == .trackhub && options.courierSubscribe {
                send(id, message: ClientMessages.subscribe(
                    trip: trips[Int(t)].id, mode: .frames, id: .integer(0), headroom: OutboundMessage.headroom))
            }
            // The first fix (or message) at a random point of the first interval.
            let interval = sendIntervalMicros
            trips[Int(t)].nextDue = max(now, trips[Int(t)].nextDue) + Int64.random(in: 0..<max(1, interval))
        case .viewer(let v):
            startSubscription(Int(v), now: now)
        case .fleet(let f):
            fleetViewers[Int(f)].isOpen = true
            fleetViewers[Int(f)].nextPan = now
            pan(Int(f), now: now)
        case .idle, .none:
            break
        }
    }

    private func startSubscription(_ v: Int, now: Int64) {
        viewers[v].isOpen = true
        viewers[v].firstSeq = -1
        viewers[v].recent.reset()
        viewers[v].endedSeen = false
        viewers[v].shown = false
        let trip = trips[Int(viewers[v].trip)]
        viewers[v].nextMark = viewers[v].segments ? trip.segmentMarks.count : trip.frameMarks.count
        guard options.target == .trackhub, let id = viewers[v].connection else { return }
        let mode: SubscriptionMode = viewers[v].segments ? .segments : .frames
        send(id, message: ClientMessages.subscribe(trip: trip.id, mode: mode, id: .integer(0), headroom: OutboundMessage.headroom))
    }

    func connectionClosed(_ id: ConnectionID, code: UInt16?, reason: String) {
        let raw = Int(id.raw)
        guard raw < owners.count else { return }
        let owner = owners[raw]
        owners[raw] = .none
        let stopping = control.withLock { $0.stopping }
        if wasOpened[raw] {
            counters.open -= 1
        }
        switch owner {
        case .courier(let t): trips[Int(t)].isOpen = false
        case .viewer(let v): viewers[Int(v)].isOpen = false
        case .fleet(let f): fleetViewers[Int(f)].isOpen = false
        case .idle, .none: break
        }
        if churnClosing.remove(id.raw) != nil, case .viewer(let v) = owner, !stopping {
            counters.reconnects += 1
            openViewer(Int(v))
            return
        }
        if stopping { return }
        let label = code.map { "\($0) \(reason)" } ?? reason
        counters.closeReasons[label, default: 0] += 1
        if wasOpened[raw] { counters.dropped += 1 } else { counters.refused += 1 }
    }

    /// `--churn`: closes a share of the open trip viewers each second; they reconnect and
    /// subscribe again as soon as the close completes.
    func churn(now: Int64) {
        guard options.churnPerSecond > 0, !viewers.isEmpty, let host else { return }
        if lastChurn == 0 || now < measureStart - Int64(options.warmupMs) * 1000 { lastChurn = now; return }
        churnCredit += options.churnPerSecond * Double(viewers.count) * Double(now - lastChurn) / 1_000_000
        lastChurn = now
        var tries = 0
        while churnCredit >= 1 && tries < viewers.count {
            tries += 1
            let v = churnCursor % viewers.count
            churnCursor += 1
            guard viewers[v].isOpen, let id = viewers[v].connection, !churnClosing.contains(id.raw) else { continue }
            churnClosing.insert(id.raw)
            host.close(id)
            churnCredit -= 1
        }
    }

    /// Queues a text message; the batch goes to the loop at the end of the turn.
    func send(_ id: ConnectionID, _ text: String) {
        outbox.append((id, OutboundMessage(payload: Array(text.utf8))))
        if outbox.count >= 256 { flushOutbox() }
    }

    /// Queues a message encoded with `OutboundMessage.headroom` leading bytes (no copy).
    func send(_ id: ConnectionID, message: [UInt8]) {
        outbox.append((id, OutboundMessage(bufferWithHeadroom: message)))
        if outbox.count >= 256 { flushOutbox() }
    }

    func flushOutbox() {
        guard !outbox.isEmpty, let host else { return }
        host.send(batch: outbox)
        outbox.removeAll(keepingCapacity: true)
    }

    var sendIntervalMicros: Int64 {
        options.target == .nchan ? Int64(1_000_000 / options.publishRate) : options.fixIntervalMs * 1000
    }
}
