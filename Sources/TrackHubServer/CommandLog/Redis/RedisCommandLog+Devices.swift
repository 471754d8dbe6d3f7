import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// Cluster mode's devices (PROTOCOL 11): a registration, change or deletion is an entry of
/// the device's partition, answered by the node that appended it once it applies it, as a
/// trip command is; every node applies it, so a device registered through one hub sends its
/// fixes through any. A device's fixes carry its id, and every node that applies one takes
/// the device's `last_seen` (the entry's log time) and `last_position` from it
/// (`ClusterDevices` explains why that agrees on every node).
extension RedisCommandLog {
    func submit(_ command: DeviceCommand, reply: Reply, now: Int64) {
        switch command {
        case .put(let id, let trip, let name):
            appendToLog(ClusterCommand(kind: .putDevice, trip: trip, device: id, name: name), reply: reply, now: now)
        case .delete(let id):
            appendToLog(ClusterCommand(kind: .deleteDevice, device: id), reply: reply, now: now)
        }
    }

    func submitDeviceFix(_ fix: FixInput, device id: String, trip: String?, reply: Reply, now: Int64) {
        if let trip {
            appendToLog(ClusterCommand(kind: .fixes, trip: trip, fixes: [fix], device: id), reply: reply, now: now)
        } else {
            appendToLog(ClusterCommand(kind: .deviceSeen, fixes: [fix], device: id), reply: reply, now: now)
        }
    }

    /// The watermark is Redis's clock, `t` this node's: with clocks in step (docs/cluster.md,
    /// "Time"), every entry appended before the request arrived is then applied here.
    func afterApplying(upTo t: Int64, reply: Reply, _ then: @escaping () -> Void) {
        if state.watermark >= t { return then() }
        guard state.awaitingLog.count < ClusterState.maxPending else {
            return services.replies.answerFailure(reply, ProtocolError(.unavailable, "too many requests waiting for the cluster log; try again"))
        }
        state.awaitingLog.append(ClusterState.AwaitingLog(upTo: t, since: services.clock.wallMillis(), reply: reply, then: then))
    }

    /// Runs the waiting requests the watermark has reached; those that waited too long are
    /// answered `unavailable` (after each batch, and in housekeeping).
    func runAwaitingLog(now: Int64) {
        guard !state.awaitingLog.isEmpty else { return }
        let waiting = state.awaitingLog
        state.awaitingLog = []
        var still: [ClusterState.AwaitingLog] = []
        for item in waiting {
            if state.watermark >= item.upTo {
                item.then()
            } else if now - item.since > ClusterState.awaitLogTimeoutMs {
                services.replies.answerFailure(item.reply, ProtocolError(.unavailable, "this hub has not caught up with the cluster log within \(ClusterState.awaitLogTimeoutMs / 1000) s; try again"))
            } else {
                still.append(item)
            }
        }
        state.awaitingLog = still + state.awaitingLog  // `then` may have queued more
    }

    func applyDeviceCommand(_ command: ClusterCommand, entry: ClusterReadBatch.Entry, request: Int64?) {
        guard let id = command.device else {
            return answer(request) { [self] reply in services.replies.answerFailure(reply, ProtocolError(.badRequest, "device: missing from the log entry")) }
        }
        switch command.kind {
        case .putDevice:
            let device = state.devices.put(id, trip: command.trip, name: command.name, at: entry.id.ms)
            services.devices.registry[id] = device
            answer(request) { [self] reply in services.devices.answerDevice(reply, device) }
        case .deleteDevice:
            guard let device = state.devices.delete(id) else {
                return answer(request) { [self] reply in services.replies.answerFailure(reply, .notFound("device \(id) is not registered")) }
            }
            services.devices.forgetDevice(id)
            answer(request) { [self] reply in services.devices.answerDevice(reply, device) }
        case .deviceSeen:
            // In the device's partition, after its registration: an unknown device here is one
            // deleted before this entry, on every node alike.
            guard noteDeviceSighting(command, entry: entry) != nil else {
                return answer(request) { [self] reply in services.replies.answerFailure(reply, .notFound("device \(id) is not registered")) }
            }
            answer(request) { [self] reply in
                if case .device(let connection, let source, _) = reply { services.replies.respondDevice(connection, source) }
            }
        case .create, .route, .proceed, .end, .fixes, .signalLost, .share, .revokeShare:
            break
        }
    }

    /// A device's fix in the log (a `fixes` entry carrying its id, or `deviceSeen`): its
    /// `last_seen` and `last_position`, the same on every node. Returns the device as it now
    /// is, nil when it is not registered here.
    @discardableResult
    func noteDeviceSighting(_ command: ClusterCommand, entry: ClusterReadBatch.Entry) -> StoredDevice? {
        guard let id = command.device, let fix = command.fixes?.last else { return nil }
        let sighting = ClusterDevices.Sighting(at: entry.id.ms, sequence: entry.id.sequence, partition: entry.partition, position: fix.point)
        guard let device = state.devices.sighted(id, sighting) else { return nil }
        services.devices.registry[id] = device
        return device
    }
}
