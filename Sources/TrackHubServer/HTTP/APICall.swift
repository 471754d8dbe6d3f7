import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// A `/v1` request parsed once (PROTOCOL 5): its route with the decoded query and body.
/// Authorisation and dispatch read the same values, so nothing is decoded twice, and the
/// request's own errors (400, 413) are known before its scope is checked (PROTOCOL 4).
enum APICall: Sendable {
    case listTrips(TripListQuery)
    /// `route` is the request's route, checked (nil: a trip without one).
    case createTrip(CreateTripRequest, route: Route?, rawBody: [UInt8])
    case getTrip(id: String)
    case endTrip(id: String)
    case putRoute(id: String, RerouteRequest, route: Route, rawBody: [UInt8])
    case postFixes(id: String, [FixInput])
    case proceed(id: String)
    case trail(id: String, TrailQuery, TrailFormat)
    case fleetClusters(ClustersQuery)
    case openAPI
    case listDevices
    case getDevice(id: String)
    case putDevice(id: String, DeviceRequest)
    case deleteDevice(id: String)
    /// A fix in a phone app's protocol; nil from OwnTracks: a message that is not a location.
    case deviceFix(device: String, DeviceFix?, DeviceFix.Source)
    case createShare(id: String, ShareRequest)
    case revokeShare(jti: String)
    case findRoute(RouteSearchQuery)

    /// The limits parsing applies (the hub's flags).
    struct Limits: Sendable {
        var protocolLimits: ProtocolLimits
        var maxRoutePoints: Int
    }

    /// Decodes what `route` needs from the request; the error names the field.
    static func parse(_ route: APIRoute, _ request: HTTPRequest, limits: Limits, now: Int64) throws(ProtocolError) -> APICall {
        let body = request.body
        switch route {
        case .listTrips:
            return .listTrips(try TripListQuery.parse(query(of: request)))
        case .createTrip:
            let decoded = try CreateTripRequest.decode(body, limits: limits.protocolLimits)
            return .createTrip(decoded, route: try decoded.route?.makeRoute(maxPoints: limits.maxRoutePoints), rawBody: body)
        case .getTrip(let id):
            return .getTrip(id: id)
        case .endTrip(let id):
            return .endTrip(id: id)
        case .putRoute(let id):
            let decoded = try RerouteRequest.decode(body, limits: limits.protocolLimits)
            return .putRoute(id: id, decoded, route: try decoded.route.makeRoute(maxPoints: limits.maxRoutePoints), rawBody: body)
        case .postFixes(let id):
            return .postFixes(id: id, try FixBatchRequest.decode(body, limits: limits.protocolLimits, now: now).fixes)
        case .proceed(let id):
            return .proceed(id: id)
        case .trail(let id):
            let items = query(of: request)
            return .trail(id: id, try TrailQuery.parse(items), try TrailFormat.parse(items))
        case .fleetClusters:
            return .fleetClusters(try ClustersQuery.parse(query(of: request)))
        case .openAPI:
            return .openAPI
        case .listDevices:
            return .listDevices
        case .getDevice(let id):
            return .getDevice(id: id)
        case .putDevice(let id):
            return .putDevice(id: id, try DeviceRequest.decode(body, limits: limits.protocolLimits))
        case .deleteDevice(let id):
            return .deleteDevice(id: id)
        case .osmandGet, .osmandPost:
            let fix = try OsmAndRequest.parse(query: request.query, body: body, limits: limits.protocolLimits, now: now)
            return .deviceFix(device: fix.device, fix, .osmand)
        case .ownTracks(let id):
            return .deviceFix(device: id, try OwnTracksMessage.parse(device: id, body: body, limits: limits.protocolLimits, now: now), .owntracks)
        case .createShare(let id):
            return .createShare(id: id, try ShareRequest.decode(body, limits: limits.protocolLimits))
        case .revokeShare(let jti):
            return .revokeShare(jti: jti)
        case .findRoute:
            return .findRoute(try RouteSearchQuery.parse(query(of: request), limits: limits.protocolLimits))
        }
    }

    private static func query(of request: HTTPRequest) -> QueryString {
        QueryString(items: request.query)
    }

    /// The route this call was parsed from.
    var route: APIRoute {
        switch self {
        case .listTrips: return .listTrips
        case .createTrip: return .createTrip
        case .getTrip(let id): return .getTrip(id: id)
        case .endTrip(let id): return .endTrip(id: id)
        case .putRoute(let id, _, _, _): return .putRoute(id: id)
        case .postFixes(let id, _): return .postFixes(id: id)
        case .proceed(let id): return .proceed(id: id)
        case .trail(let id, _, _): return .trail(id: id)
        case .fleetClusters: return .fleetClusters
        case .openAPI: return .openAPI
        case .listDevices: return .listDevices
        case .getDevice(let id): return .getDevice(id: id)
        case .putDevice(let id, _): return .putDevice(id: id)
        case .deleteDevice(let id): return .deleteDevice(id: id)
        case .deviceFix(let device, _, let source): return source == .osmand ? .osmandPost : .ownTracks(id: device)
        case .createShare(let id, _): return .createShare(id: id)
        case .revokeShare(let jti): return .revokeShare(jti: jti)
        case .findRoute: return .findRoute
        }
    }
}

extension RouteInput {
    /// The core `Route` of a validated route input, with errors naming the field
    /// (`route` or `route_polyline`, PROTOCOL 5).
    func makeRoute(maxPoints: Int) throws(ProtocolError) -> Route {
        let points: [GeoPoint]
        let field: String
        switch self {
        case .points(let given):
            points = given
            field = "route"
        case .polyline(let text):
            field = "route_polyline"
            do {
                points = try Polyline.decode(text)
            } catch {
                throw .badRequest("route_polyline is not a valid encoded polyline (at character \(error.offset))")
            }
        }
        if points.count > maxPoints {
            throw .tooLarge("\(field) has \(points.count) points; the limit is \(maxPoints)")
        }
        do {
            return try Route(points: points)
        } catch {
            switch error {
            case .tooFewPoints: throw .badRequest("\(field) needs at least 2 points")
            case .zeroLength: throw .badRequest("\(field) has zero length")
            case .invalidCoordinate(let index): throw .badRequest("\(field)[\(index)] is not a valid coordinate")
            }
        }
    }
}
