import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// Phone apps as couriers (PROTOCOL 11): the registered devices, bound to trips, whose fixes
/// in the OsmAnd and OwnTracks protocols go through the same command path as any fix. It owns
/// the device table (`registry`) and the rules of `/v1/devices` and of a phone's fix; the
/// command logs apply the changes it submits to `registry` and answer through `answerDevice`.
///
/// Threads: the service thread only, like the hub that owns it.
final class DeviceService {
    /// The shortest device id a secured hub registers: the id is the device's secret.
    static let minimumSecuredDeviceIDLength = 16

    /// The registered devices and their fix-rate buckets, as the command log applied them
    /// (the logs write it: a change, a sighting, a restore or a cluster snapshot).
    var registry = DeviceRegistry()
    /// Where the changes and fixes it takes become durable. Weak: the hub owns the log and
    /// makes it only once the hub exists (the log needs the hub), so the hub sets this when
    /// it builds the log (`Hub.makeCommandLog`), before the service thread runs.
    weak var commandLog: (any CommandDurability)?

    /// The trips devices are bound to (read only: whether a bound trip exists and is active).
    private let trips: TripTable
    /// Every answer, in the phone's form or HTTP's.
    private let replies: Replies
    /// Counts fixes taken from phones.
    private let metrics: HubMetrics
    /// Where the registered devices are loaded from at start-up (a hub alone).
    private let storage: TripStorage
    /// `--max-fix-rate`: fixes per second per device.
    private let maxFixRate: Int
    /// A secured hub (`--jwt-secret`): a device id is then a credential, and must be long.
    private let isSecured: Bool

    /// A service with no device registered yet (`restoreDevices` or the log fills it).
    init(trips: TripTable, replies: Replies, metrics: HubMetrics, storage: TripStorage, maxFixRate: Int, isSecured: Bool) {
        self.trips = trips
        self.replies = replies
        self.metrics = metrics
        self.storage = storage
        self.maxFixRate = maxFixRate
        self.isSecured = isSecured
    }

    /// The command log, which the hub has set by the time any request arrives.
    private var commands: any CommandDurability {
        guard let commandLog else { preconditionFailure("DeviceService: used before the hub built its command log") }
        return commandLog
    }

    /// Loads the registered devices of the local store (a hub alone; see `LocalCommandLog`).
    func restoreDevices() throws {
        registry.replaceAll(with: try storage.store.loadDevices())
    }

    /// The trip a device's fixes go to now: its bound trip while that exists and has not
    /// ended (a device whose trip ended stays registered, bound to none).
    func activeTrip(of device: StoredDevice) -> String? {
        guard let id = device.trip, let entry = trips[id], entry.trip.status != .ended else { return nil }
        return id
    }

    /// A device as `/v1/devices` shows it: bound to its active trip only.
    func deviceView(_ device: StoredDevice) -> DeviceView {
        DeviceView(device: device.id, trip: activeTrip(of: device), name: device.name, lastSeen: device.lastSeen, lastPosition: device.lastPosition)
    }

    // MARK: - /v1/devices (admin)

    /// `GET /v1/devices`: every device, ordered by id (bytewise).
    func listDevices(_ connection: ConnectionID) {
        let sorted = registry.all.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        replies.respond(connection, status: 200, json: HTTPBodies.deviceList(sorted.map(deviceView)))
    }

    /// `GET /v1/devices/{id}`: the device, 404 when it is not registered.
    func getDevice(_ connection: ConnectionID, id: String) throws(ProtocolError) {
        guard let device = registry[id] else { throw .notFound("device \(id) is not registered") }
        replies.respond(connection, status: 200, json: HTTPBodies.device(deviceView(device)))
    }

    /// Registers or rebinds a device; answered once durable (`answerDevice`).
    func putDevice(_ connection: ConnectionID, id: String, _ body: DeviceRequest, now: Int64) throws(ProtocolError) {
        if isSecured && id.count < Self.minimumSecuredDeviceIDLength {
            throw .badRequest("device: on a secured hub a device id is its credential and must have at least \(Self.minimumSecuredDeviceIDLength) characters")
        }
        let command = DeviceCommand.put(id: id, trip: body.trip, name: body.name)
        guard let trip = body.trip, trips[trip] == nil else {
            return commands.submit(command, reply: .http(connection), now: now)
        }
        // A trip created a moment ago through another hub of a cluster may not be applied here yet.
        commands.afterApplying(upTo: now, reply: .http(connection)) { [self] in
            guard trips[trip] != nil else { return replies.respondError(connection, .notFound("trip \(trip) does not exist")) }
            commands.submit(command, reply: .http(connection), now: now)
        }
    }

    /// Forgets a device; the command log answers 404 for one not registered.
    func deleteDevice(_ connection: ConnectionID, id: String, now: Int64) {
        commands.submit(.delete(id: id), reply: .http(connection), now: now)
    }

    /// The answer to a device change: the device as it is now (for a delete, as it was).
    func answerDevice(_ reply: Reply, _ device: StoredDevice) {
        switch reply {
        case .http(let connection), .device(let connection, _, _):
            replies.respond(connection, status: 200, json: HTTPBodies.device(deviceView(device)))
        case .webSocket:
            break  // device changes come over HTTP only
        }
    }

    /// A device the command log has forgotten: it and its fix-rate bucket go.
    func forgetDevice(_ id: String) {
        registry[id] = nil  // and its bucket
    }

    // MARK: - Fixes from phones (no token: the device id is the credential)

    /// A fix from a phone: a fix of its device's trip through the command log (judged,
    /// stored, answered once durable, animated, fanned out); a device bound to no trip only
    /// has its `last_seen` and `last_position` kept. `fix` nil: an OwnTracks message that is
    /// not a location (answered `[]`).
    func deviceFix(_ connection: ConnectionID, device id: String, _ fix: DeviceFix?, source: DeviceFix.Source, now: Int64) throws(ProtocolError) {
        guard registry[id] == nil else { return try acceptDeviceFix(connection, device: id, fix, source: source, now: now) }
        // Registered a moment ago through another hub of a cluster, or not at all: look again
        // once this hub has applied every command made before this fix arrived.
        commands.afterApplying(upTo: now, reply: .device(connection, source, device: id)) { [self] in
            do throws(ProtocolError) {
                try acceptDeviceFix(connection, device: id, fix, source: source, now: now)
            } catch {
                replies.respondDeviceError(connection, source, error)
            }
        }
    }

    /// A fix from a device this hub has applied: within its rate, submitted as its active
    /// trip's fix (or, bound to none, as a sighting).
    private func acceptDeviceFix(_ connection: ConnectionID, device id: String, _ fix: DeviceFix?, source: DeviceFix.Source, now: Int64) throws(ProtocolError) {
        guard let device = registry[id] else { throw .notFound("device \(id) is not registered") }
        guard let fix else { return replies.respondDevice(connection, source) }
        guard registry.takeFixToken(id, ratePerSecond: maxFixRate, now: now) else {
            throw .rateLimited("device \(id): more than \(maxFixRate) fixes per second")
        }
        metrics.fixesIn += 1
        metrics.deviceFixes[source.rawValue, default: 0] += 1
        guard let bound = device.trip else {
            return commands.submitDeviceFix(fix.fix, device: id, trip: nil, reply: .device(connection, source, device: id), now: now)
        }
        // PROTOCOL 15: the fix is judged in its trip's partition, which this hub then applies.
        commands.usingTrip(bound, reply: .device(connection, source, device: id), now: now) { [self] in
            guard let device = registry[id] else { return replies.respondDeviceError(connection, source, .notFound("device \(id) is not registered")) }
            commands.submitDeviceFix(fix.fix, device: id, trip: activeTrip(of: device), reply: .device(connection, source, device: id), now: now)
        }
    }

    /// True when `id` is not a registered device and cannot become one by waiting: where the
    /// log applies every command before it is answered (a hub alone), what this hub does not
    /// know does not exist; in a cluster a device registered through another hub a moment
    /// ago may not be applied here yet, so the request is read (at most 64 KiB) and the
    /// lookup waits for the log (`deviceFix`). An id of the wrong shape is left to the
    /// parser, whose 400 names the field.
    func isSurelyUnknownDevice(_ id: String) -> Bool {
        registry[id] == nil && commands.appliesCommandsOnArrival && TripID.isValid(id)
    }

    /// True for the paths phones post to (their refusals are counted by reason).
    static func isDeviceEndpoint(_ path: String) -> Bool {
        path == "/v1/osmand" || path.hasPrefix("/v1/owntracks/")
    }
}
