import TrackHubLWS
import TrackHubProtocol

/// The `/v1` HTTP routes (PROTOCOL sections 5 and 14): the one table that dispatch,
/// authorisation, CORS preflights, `Allow` and the OpenAPI document all read.
enum APIRoute: Equatable, Sendable {
    case listTrips
    case createTrip
    case getTrip(id: String)
    case endTrip(id: String)
    case putRoute(id: String)
    case postFixes(id: String)
    case proceed(id: String)
    case trail(id: String)
    case fleetClusters
    case openAPI
    case listDevices
    case getDevice(id: String)
    case putDevice(id: String)
    case deleteDevice(id: String)
    /// The OsmAnd protocol (PROTOCOL 11), GET or POST.
    case osmandGet
    case osmandPost
    /// OwnTracks' HTTP mode; `id` is the device.
    case ownTracks(id: String)
    /// A share link for the trip (PROTOCOL 13).
    case createShare(id: String)
    /// Revokes the share link whose token has this `jti`.
    case revokeShare(jti: String)
    /// A route from the hub's router, without making a trip (PROTOCOL 16).
    case findRoute

    /// A route without its path parameters: one row of the table.
    enum Kind: String, CaseIterable, Sendable {
        case listTrips, createTrip, getTrip, endTrip, putRoute, postFixes, proceed, trail, fleetClusters, openAPI
        case listDevices, getDevice, putDevice, deleteDevice, osmandGet, osmandPost, ownTracks
        case createShare, revokeShare, findRoute

        var method: HTTPMethod {
            switch self {
            case .listTrips, .getTrip, .trail, .fleetClusters, .openAPI, .listDevices, .getDevice, .osmandGet, .findRoute: return .get
            case .createTrip, .postFixes, .proceed, .osmandPost, .ownTracks, .createShare: return .post
            case .endTrip, .deleteDevice, .revokeShare: return .delete
            case .putRoute, .putDevice: return .put
            }
        }

        /// The path, `{id}` standing for a trip id (a device id under `/v1/devices` and
        /// `/v1/owntracks`: the same alphabet).
        var template: String {
            switch self {
            case .listTrips, .createTrip: return "/v1/trips"
            case .getTrip, .endTrip: return "/v1/trips/{id}"
            case .putRoute: return "/v1/trips/{id}/route"
            case .postFixes: return "/v1/trips/{id}/fixes"
            case .proceed: return "/v1/trips/{id}/proceed"
            case .trail: return "/v1/trips/{id}/trail"
            case .fleetClusters: return "/v1/fleet/clusters"
            case .openAPI: return "/v1/openapi.json"
            case .listDevices: return "/v1/devices"
            case .getDevice, .putDevice, .deleteDevice: return "/v1/devices/{id}"
            case .osmandGet, .osmandPost: return "/v1/osmand"
            case .ownTracks: return "/v1/owntracks/{id}"
            case .createShare: return "/v1/trips/{id}/share"
            case .revokeShare: return "/v1/shares/{id}"
            case .findRoute: return "/v1/route"
            }
        }

        /// Who may call it (PROTOCOL 2).
        var access: Access {
            switch self {
            case .listTrips: return .anyToken
            case .createTrip, .endTrip, .putRoute, .listDevices, .getDevice, .putDevice, .deleteDevice: return .admin
            case .createShare, .revokeShare, .findRoute: return .admin
            case .osmandGet, .osmandPost, .ownTracks: return .device
            case .getTrip: return .followTrip
            case .trail: return .viewTrip
            case .postFixes, .proceed: return .driveTrip
            case .fleetClusters: return .fleet
            case .openAPI: return .anyone
            }
        }

        /// True when the route's template has `{id}`.
        var hasTripID: Bool { template.contains("{id}") }

        /// True when `{id}` is a device id, not a trip id.
        var isDeviceRoute: Bool { template.hasPrefix("/v1/devices") || template.hasPrefix("/v1/owntracks") }

        fileprivate var segments: [Substring] { template.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map { $0 } }

        func route(id: String) -> APIRoute {
            switch self {
            case .listTrips: return .listTrips
            case .createTrip: return .createTrip
            case .getTrip: return .getTrip(id: id)
            case .endTrip: return .endTrip(id: id)
            case .putRoute: return .putRoute(id: id)
            case .postFixes: return .postFixes(id: id)
            case .proceed: return .proceed(id: id)
            case .trail: return .trail(id: id)
            case .fleetClusters: return .fleetClusters
            case .openAPI: return .openAPI
            case .listDevices: return .listDevices
            case .getDevice: return .getDevice(id: id)
            case .putDevice: return .putDevice(id: id)
            case .deleteDevice: return .deleteDevice(id: id)
            case .osmandGet: return .osmandGet
            case .osmandPost: return .osmandPost
            case .ownTracks: return .ownTracks(id: id)
            case .createShare: return .createShare(id: id)
            case .revokeShare: return .revokeShare(jti: id)
            case .findRoute: return .findRoute
            }
        }
    }

    /// The result of matching a method and a path against the table.
    enum Match: Equatable, Sendable {
        case route(APIRoute)
        /// `OPTIONS` on a known path: the methods it takes.
        case preflight(allowed: [HTTPMethod])
        /// A known path with a method it does not take (405).
        case methodNotAllowed(allowed: [HTTPMethod])
        /// A known path whose trip id is not a valid id (400 naming `id`).
        case badTripID(String)
        /// No such path (404).
        case notFound
    }

    var kind: Kind {
        switch self {
        case .listTrips: return .listTrips
        case .createTrip: return .createTrip
        case .getTrip: return .getTrip
        case .endTrip: return .endTrip
        case .putRoute: return .putRoute
        case .postFixes: return .postFixes
        case .proceed: return .proceed
        case .trail: return .trail
        case .fleetClusters: return .fleetClusters
        case .openAPI: return .openAPI
        case .listDevices: return .listDevices
        case .getDevice: return .getDevice
        case .putDevice: return .putDevice
        case .deleteDevice: return .deleteDevice
        case .osmandGet: return .osmandGet
        case .osmandPost: return .osmandPost
        case .ownTracks: return .ownTracks
        case .createShare: return .createShare
        case .revokeShare: return .revokeShare
        case .findRoute: return .findRoute
        }
    }

    /// The trip id of a `/v1/trips/{id}...` route.
    var tripID: String? {
        switch self {
        case .getTrip(let id), .endTrip(let id), .putRoute(let id), .postFixes(let id), .proceed(let id), .trail(let id),
            .createShare(let id):
            return id
        case .listTrips, .createTrip, .fleetClusters, .openAPI, .listDevices, .getDevice, .putDevice, .deleteDevice,
            .osmandGet, .osmandPost, .ownTracks, .revokeShare, .findRoute:
            return nil
        }
    }

    /// Matches a decoded path (`/v1/...`, no query) and a method, once.
    static func match(method: HTTPMethod, path: String) -> Match {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map { $0 }
        var kinds: [Kind] = []
        var id = ""
        for kind in Kind.allCases {
            let segments = kind.segments
            guard segments.count == parts.count else { continue }
            var matches = true
            for (template, part) in zip(segments, parts) {
                if template == "{id}" {
                    id = String(part)
                } else if template != part {
                    matches = false
                    break
                }
            }
            if matches { kinds.append(kind) }
        }
        guard !kinds.isEmpty else { return .notFound }
        let allowed = kinds.map(\.method)
        if method == .options { return .preflight(allowed: allowed) }
        guard let kind = kinds.first(where: { $0.method == method }) else { return .methodNotAllowed(allowed: allowed) }
        if kind.hasTripID && !TripID.isValid(id) { return .badTripID(id) }
        return .route(kind.route(id: id))
    }

    /// The `Allow` header's value for these methods (OPTIONS included: the hub answers it).
    static func allowHeader(_ methods: [HTTPMethod]) -> String {
        (methods + [.options]).map(\.rawValue).joined(separator: ", ")
    }
}
