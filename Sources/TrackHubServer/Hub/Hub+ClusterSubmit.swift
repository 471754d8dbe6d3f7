import TrackHubCore
import TrackHubProtocol
import TrackHubRedis

/// Cluster mode: a command goes to the log first; the node that appended it answers it when
/// it applies its own entry (so every answer is decided in log order, the same on every node).
/// PROTOCOL 7: a fix is acked only once Redis has it; while Redis cannot take it the client
/// gets `unavailable`, never an ack.
extension Hub {
    /// Appends a command to its trip's partition of the log. `reply` nil: nobody waits.
    func appendToLog(_ command: ClusterCommand, reply: Reply?, now: Int64) {
        guard let cluster else { return }
        var command = command
        var requestNumber: Int64?
        if let reply {
            if cluster.pending.count >= ClusterState.maxPending {
                answerFailure(reply, ProtocolError(.unavailable, "\(command.kind.rawValue): too many commands waiting for the cluster log; try again"))
                return
            }
            let number = cluster.nextRequest
            cluster.nextRequest += 1
            cluster.pending[number] = ClusterState.Pending(reply: reply, appendedAt: now)
            if case .webSocket(let connection, _) = reply { cluster.pendingOrder[connection, default: []].append(number) }
            command.origin = cluster.nodeID
            command.request = number
            requestNumber = number
        }
        let request = requestNumber
        metrics.clusterAppends += 1
        let partition = ClusterLog.partition(of: command.trip, partitions: cluster.partitions)
        let what = command.kind == .fixes ? "fix" : command.kind.rawValue
        cluster.writer.append(partition: partition, payload: command.encoded()) { [self] result in
            guard case .failure(let error) = result else { return }
            runOnServiceThread { [self] in
                metrics.clusterAppendFailures += 1
                guard let request else { return }
                answerPending(request) { [self] reply in
                    answerFailure(reply, ProtocolError(.unavailable, "\(what) not stored: \(error)"))
                }
            }
        }
    }

    /// Gives a pending command its answer; answers go out per connection in arrival order.
    func answerPending(_ request: Int64, _ answer: @escaping (Reply) -> Void) {
        guard let cluster, let pending = cluster.pending[request], pending.answer == nil else { return }
        let reply = pending.reply
        cluster.pending[request]?.answer = { answer(reply) }
        switch reply {
        case .http:
            cluster.pending[request] = nil
            answer(reply)
        case .webSocket(let connection, _):
            flushPendingAnswers(of: connection)
        }
    }

    /// Sends the answers at the front of a connection's queue that are ready.
    private func flushPendingAnswers(of connection: ConnectionID) {
        guard let cluster, var order = cluster.pendingOrder[connection] else { return }
        var sent = 0
        for request in order {
            guard let answer = cluster.pending[request]?.answer else { break }
            cluster.pending[request] = nil
            answer()
            sent += 1
        }
        order.removeFirst(sent)
        cluster.pendingOrder[connection] = order.isEmpty ? nil : order
    }

    /// A connection closed: its pending commands still go through the log, unanswered.
    func forgetPendingAnswers(of connection: ConnectionID) {
        guard let cluster, let order = cluster.pendingOrder.removeValue(forKey: connection) else { return }
        for request in order { cluster.pending[request] = nil }
    }

    /// Commands not applied within the timeout are answered `unavailable` (housekeeping).
    func expirePendingCommands(now: Int64) {
        guard let cluster else { return }
        let late = cluster.pending.filter { $0.value.answer == nil && now - $0.value.appendedAt > ClusterState.pendingTimeoutMs }
        for request in late.keys.sorted() {
            answerPending(request) { [self] reply in
                answerFailure(reply, ProtocolError(.unavailable, "the cluster log has not confirmed this command within \(ClusterState.pendingTimeoutMs / 1000) s; resend it (a resent fix is acked as a duplicate if it was stored)"))
            }
        }
    }
}
