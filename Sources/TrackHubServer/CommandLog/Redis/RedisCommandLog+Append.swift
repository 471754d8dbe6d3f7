import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubRedis

/// Cluster mode: a command goes to the log first; the node that appended it answers it when
/// it applies its own entry (so every answer is decided in log order, the same on every node).
/// PROTOCOL 7: a fix is acked only once Redis has it; while Redis cannot take it the client
/// gets `unavailable`, never an ack.
extension RedisCommandLog {
    /// Appends a command to its trip's (or device's) partition of the log. `reply` nil: nobody waits.
    func appendToLog(_ command: ClusterCommand, reply: Reply?, now: Int64) {
        var command = command
        var requestNumber: Int64?
        if let refusal = syncFullRefusal {
            // PROTOCOL 15: --sync full acks nothing that would not survive a power cut.
            if let reply { services.replies.answerFailure(reply, ProtocolError(.unavailable, refusal)) }
            return
        }
        if let reply {
            if state.pending.count >= ClusterState.maxPending {
                services.replies.answerFailure(reply, ProtocolError(.unavailable, "\(command.kind.rawValue): too many commands waiting for the cluster log; try again"))
                return
            }
            let number = state.nextRequest
            state.nextRequest += 1
            state.pending[number] = ClusterState.Pending(reply: reply, appendedAt: now, confirmed: services.config.clusterReplicas == 0)
            if case .webSocket(let connection, _) = reply { state.pendingOrder[connection, default: []].append(number) }
            command.origin = state.nodeID
            command.request = number
            requestNumber = number
        }
        let request = requestNumber
        counters.appends += 1
        let partition = ClusterLog.partition(of: command.partitionKey, partitions: state.partitions)
        let what = command.kind == .fixes ? "fix" : command.kind.rawValue
        let waitsForReplicas = services.config.clusterReplicas > 0
        state.writer.append(partition: partition, payload: command.encoded()) { [self] result in
            guard case .failure(let error) = result else {
                // On the replicas --cluster-replicas asks for: an answer may go out.
                if waitsForReplicas, let request { services.inbox.run { [self] in entryConfirmed(request) } }
                return
            }
            services.inbox.run { [self] in
                counters.appendFailures += 1
                guard let request else { return }
                let message = ClusterLogWriter.isReplicaShortfall(error) ? "\(what) not confirmed: \(error)" : "\(what) not stored: \(error)"
                answerPending(request, refusal: true) { [self] reply in
                    services.replies.answerFailure(reply, ProtocolError(.unavailable, message))
                }
            }
        }
    }

    /// Gives a pending command its answer; answers go out per connection in arrival order,
    /// and not before the entry is on the replicas `--cluster-replicas` asks for (a refusal
    /// goes at once: `confirmed` only holds back what would promise more than holds).
    func answerPending(_ request: Int64, refusal: Bool = false, _ answer: @escaping (Reply) -> Void) {
        // A refusal replaces an answer still waiting for the replicas (they did not confirm).
        guard let pending = state.pending[request], pending.answer == nil || (refusal && !pending.confirmed) else { return }
        let reply = pending.reply
        state.pending[request]?.answer = { answer(reply) }
        if refusal { state.pending[request]?.confirmed = true }
        guard state.pending[request]?.confirmed == true else { return }  // `entryConfirmed` sends it
        switch reply {
        case .http, .device:
            state.pending[request] = nil
            answer(reply)
        case .webSocket(let connection, _):
            flushPendingAnswers(of: connection)
        }
    }

    /// Sends the answers at the front of a connection's queue that are ready.
    func flushPendingAnswers(of connection: ConnectionID) {
        guard var order = state.pendingOrder[connection] else { return }
        var sent = 0
        for request in order {
            guard let answer = state.pending[request]?.answer, state.pending[request]?.confirmed == true else { break }
            state.pending[request] = nil
            answer()
            sent += 1
        }
        order.removeFirst(sent)
        state.pendingOrder[connection] = order.isEmpty ? nil : order
    }

    /// A connection closed: its pending commands still go through the log, unanswered.
    func forgetPendingAnswers(of connection: ConnectionID) {
        guard let order = state.pendingOrder.removeValue(forKey: connection) else { return }
        for request in order { state.pending[request] = nil }
    }

    /// Commands not applied within the timeout are answered `unavailable` (housekeeping).
    func expirePendingCommands(now: Int64) {
        let late = state.pending.filter { $0.value.answer == nil && now - $0.value.appendedAt > ClusterState.pendingTimeoutMs }
        for request in late.keys.sorted() {
            answerPending(request, refusal: true) { [self] reply in
                services.replies.answerFailure(reply, ProtocolError(.unavailable, "the cluster log has not confirmed this command within \(ClusterState.pendingTimeoutMs / 1000) s; resend it (a resent fix is acked as a duplicate if it was stored)"))
            }
        }
    }

    /// PROTOCOL 5: an arrived trip ends `--end-after` after arriving. The owner of its
    /// partition asks the log once; an end of an ended trip changes nothing.
    func requestEndsOfArrivedTrips(now: Int64) {
        for id in services.trips.arrived(atOrBefore: now - services.config.endAfterMs) where !state.endsRequested.contains(id) {
            guard state.parts[state.partition(of: id)].owned else { continue }  // its owner asks
            state.endsRequested.insert(id)
            appendToLog(ClusterCommand(kind: .end, trip: id), reply: nil, now: now)
        }
    }

    /// PROTOCOL 18: a trip found stale here (`SignalWatch`). Its partition's owner appends
    /// `signal-lost` once, and every node sends the event when it applies the entry; asked
    /// again 5 s later if it was not applied by then (an append Redis lost). Another node
    /// looks again each second, in case it becomes the owner. Returns when to look again.
    func requestSignalLost(trip id: String, lastFixT: Int64, now: Int64) -> Int64? {
        guard state.parts[state.partition(of: id)].owned else { return now + 1000 }
        appendToLog(ClusterCommand(kind: .signalLost, trip: id, lastFixT: lastFixT), reply: nil, now: now)
        return now + 5000
    }
}
