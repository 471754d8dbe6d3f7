import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// One hub alone: a device change is written to the store (SQLite) and answered after the
/// commit, as a trip command is (PROTOCOL 11: it survives a SIGKILL).
extension LocalCommandLog {
    func submit(_ command: DeviceCommand, reply: Reply, now: Int64) {
        switch command {
        case .put(let id, let trip, let name):
            var changed = services.devices.registry[id] ?? StoredDevice(id: id, trip: nil, name: nil)
            changed.trip = trip
            changed.name = name
            let device = changed
            services.storage.persist([.device(device)]) { [self] result in
                switch result {
                case .success:
                    services.devices.registry[id] = device
                    services.devices.answerDevice(reply, device)
                case .failure(let error):
                    services.replies.answerFailure(reply, ProtocolError(.unavailable, "device \(id): the store could not commit (\(error)); try again"))
                }
            }
        case .delete(let id):
            guard let device = services.devices.registry[id] else { return services.replies.answerFailure(reply, .notFound("device \(id) is not registered")) }
            services.storage.persist([.deleteDevice(id: id)]) { [self] result in
                switch result {
                case .success:
                    services.devices.forgetDevice(id)
                    services.devices.answerDevice(reply, device)
                case .failure(let error):
                    services.replies.answerFailure(reply, ProtocolError(.unavailable, "device \(id): the store could not commit (\(error)); try again"))
                }
            }
        }
    }

    func submitDeviceFix(_ fix: FixInput, device id: String, trip: String?, reply: Reply, now: Int64) {
        guard var device = services.devices.registry[id] else { return services.replies.answerFailure(reply, .notFound("device \(id) is not registered")) }
        if trip == nil { device.trip = nil }  // its trip ended or went: it stays registered, bound to none
        device.lastSeen = now
        device.lastPosition = fix.point
        services.devices.registry[id] = device
        let seen = device
        if let trip {
            // `last_seen` is bookkeeping: stored beside the fix, never holding up its answer.
            services.storage.persist([.device(seen)]) { _ in }
            submit(.fixes(trip: trip, [fix]), reply: reply, now: now)
        } else {
            services.storage.persist([.device(seen)]) { [self] result in
                switch result {
                case .success:
                    if case .device(let connection, let source, _) = reply { services.replies.respondDevice(connection, source) }
                case .failure(let error):
                    services.replies.answerFailure(reply, ProtocolError(.unavailable, "device \(id): the store could not commit (\(error)); send again"))
                }
            }
        }
    }

    func afterApplying(upTo t: Int64, reply: Reply, _ then: @escaping () -> Void) {
        then()  // every command is applied here before it is answered
    }
}
