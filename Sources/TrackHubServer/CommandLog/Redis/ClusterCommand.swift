import Foundation
import TrackHubCore

/// One entry of the cluster log: a trip, device or share link command as the node that received it
/// appended it, before anyone judged it. Every node applies it in log order (docs/cluster.md).
///
/// Creates and new routes carry the HTTP body exactly as the client sent it: every node
/// decodes it with the same code, so they all build the same route.
struct ClusterCommand: Codable, Sendable, Equatable {
    enum Kind: String, Codable, Sendable {
        case create, route, proceed, end, fixes
        /// PROTOCOL 11: a device registered or changed (`device`, `trip`, `name`), forgotten
        /// (`device`), or sighted while bound to no trip (`device`, one fix in `fixes`).
        case putDevice = "device", deleteDevice = "device-delete", deviceSeen = "device-seen"
        /// PROTOCOL 13: a share link issued (`jti`, `trip`, `expiresAt`, `issuedAt`) or
        /// revoked (`jti`; revoked at the entry's log time).
        case share, revokeShare = "share-revoke"
        /// PROTOCOL 18: the trip's partition owner found it stale (`trip`, `lastFixT`: the
        /// silence it judged); every node sends `signal_lost` at the entry's log time unless
        /// a fix arrived since.
        case signalLost = "signal-lost"

        /// Device commands go to their device's partition, so one device's changes are
        /// totally ordered; trip commands to their trip's.
        var isDeviceCommand: Bool { self == .putDevice || self == .deleteDevice || self == .deviceSeen }
        /// Share commands go to their link's partition, so a link's issue comes before its
        /// revocation on every node.
        var isShareCommand: Bool { self == .share || self == .revokeShare }
    }

    var kind: Kind
    /// Trip commands: the trip. `putDevice`: the trip the device is bound to (nil: none).
    var trip: String?
    /// The node that appended it and its number for the request, so that node (and only it)
    /// answers the client once it applies the entry. Nil for commands nobody waits for.
    var origin: String?
    var request: Int64?
    /// `create` and `route`: the request body as received (JSON text).
    var body: String?
    /// `fixes`: the fixes in the order they were sent.
    var fixes: [FixInput]?
    /// Device commands: the device. `fixes`: the device that sent them, whose `last_seen`
    /// every node takes from this entry.
    var device: String?
    /// `putDevice`: the device's name.
    var name: String?
    /// Share commands: the link's `jti`.
    var jti: String?
    /// `share`: the token's `exp` (ms) and `iat` (s); the token itself is never in the log
    /// (the node that answers mints it again from these).
    var expiresAt: Int64?
    var issuedAt: Int64?
    /// `create` and `route` whose route the hub's router found (PROTOCOL 16): the router's
    /// travel time (s). The found route itself is in `body`, so no node searches again.
    var routerDurationS: Double?
    /// `route`: `off_route` for the hub's own reroute; nil: a client's `PUT`.
    var reason: String?
    /// `signalLost`: the trip's `last_fix_t` when its owner found it stale.
    var lastFixT: Int64?
    /// `share` of a link for one stop (PROTOCOL 17): its `stop` and `visible_within_stops`
    /// claims, so the answering node mints the same token.
    var stop: String?
    var visibleWithinStops: Int?

    enum CodingKeys: String, CodingKey {
        case kind = "k", trip = "t", origin = "o", request = "r", body = "b", fixes = "f", device = "d", name = "n"
        case jti = "j", expiresAt = "x", issuedAt = "i", routerDurationS = "rd", reason = "rr", lastFixT = "lf"
        case stop = "st", visibleWithinStops = "vw"
    }

    /// The router's answer this entry carries, if any.
    var found: RouterTravel? { routerDurationS.map { RouterTravel(durationS: $0) } }

    /// The id whose partition the command goes to (`ClusterLog.partition(of:)`).
    var partitionKey: String {
        (kind.isDeviceCommand ? device : kind.isShareCommand ? jti : trip) ?? ""
    }

    func encoded() -> [UInt8] {
        // Encoding a plain Codable struct cannot fail.
        Array((try? Self.encoder.encode(self)) ?? Data())
    }

    static func decode(_ bytes: [UInt8]) -> ClusterCommand? {
        try? JSONDecoder().decode(ClusterCommand.self, from: Data(bytes))
    }

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }()
}
