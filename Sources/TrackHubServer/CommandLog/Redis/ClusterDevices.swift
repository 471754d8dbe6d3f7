import TrackHubCore
import TrackHubStore

/// Cluster mode's device table (PROTOCOL 11), the same on every node.
///
/// Registrations, changes and deletions of a device are entries of the device's partition,
/// so every node applies them in one order. Its sightings (`last_seen`, `last_position`)
/// come from the entries of its fixes, which are in its trip's partition: a node applies
/// partitions in the order its reads bring them, and one that is replaying (start-up, a
/// lag) may apply a device's fix before the registration that came first in the log. So a
/// sighting is merged, not overwritten: the latest by log position wins, whatever the order
/// in which a node applied them, and it counts only for a registration at or before its
/// time (a fix sent before a delete never shows on the device registered again after it).
struct ClusterDevices: Codable, Sendable, Equatable {
    struct Registration: Codable, Sendable, Equatable {
        var trip: String?
        var name: String?
        /// The log time (ms) of the entry that registered it (a later `putDevice` keeps it).
        var registeredAt: Int64
    }

    /// A fix of the device at a log position: `at` (the entry's ms, its `last_seen`), then
    /// the entry's sequence and partition, which only break ties between equal times.
    struct Sighting: Codable, Sendable, Equatable, Comparable {
        var at: Int64
        var sequence: Int64
        var partition: Int
        var position: GeoPoint

        static func < (a: Sighting, b: Sighting) -> Bool {
            (a.at, a.sequence, a.partition) < (b.at, b.sequence, b.partition)
        }
    }

    private(set) var registrations: [String: Registration] = [:]
    /// The latest sighting per device id, also of ids not (or not yet) registered here.
    private(set) var sightings: [String: Sighting] = [:]

    /// The device as registered, with its sighting if it counts for this registration.
    func device(_ id: String) -> StoredDevice? {
        guard let registration = registrations[id] else { return nil }
        var device = StoredDevice(id: id, trip: registration.trip, name: registration.name)
        if let seen = sightings[id], seen.at >= registration.registeredAt {
            device.lastSeen = seen.at
            device.lastPosition = seen.position
        }
        return device
    }

    /// Every registered device.
    var all: [StoredDevice] { registrations.keys.compactMap(device) }

    /// A `putDevice` applied at log time `at`: registers the device or rebinds and renames it.
    mutating func put(_ id: String, trip: String?, name: String?, at: Int64) -> StoredDevice {
        let registeredAt = registrations[id]?.registeredAt ?? at
        registrations[id] = Registration(trip: trip, name: name, registeredAt: registeredAt)
        return device(id) ?? StoredDevice(id: id, trip: trip, name: name)
    }

    /// A `deleteDevice`: the device as it was, nil when it was not registered. Its sighting
    /// stays (until pruned): a node that applied a later fix first must not lose it, and a
    /// registration after the delete ignores it (it is older).
    mutating func delete(_ id: String) -> StoredDevice? {
        guard let device = device(id) else { return nil }
        registrations[id] = nil
        return device
    }

    /// A fix of the device in the log: kept if it is the latest. Returns the device as it now
    /// is, nil when it is not registered (its sighting is kept for a registration that this
    /// node has yet to apply).
    mutating func sighted(_ id: String, _ sighting: Sighting) -> StoredDevice? {
        if let known = sightings[id], sighting <= known { return device(id) }
        sightings[id] = sighting
        return device(id)
    }

    /// Drops sightings of ids not registered once the node has applied every entry before
    /// them (`watermark`): the registration they waited for cannot come any more.
    mutating func pruneSightings(appliedBefore watermark: Int64) {
        sightings = sightings.filter { id, seen in registrations[id] != nil || seen.at >= watermark }
    }
}
