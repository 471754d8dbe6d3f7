import Foundation
import TrackHubLWS
import TrackHubProtocol

/// Identity before work on the phone endpoints (PROTOCOL 11): what can be refused about a
/// request to `/v1/osmand`, `/v1/owntracks/{device}` or the OsmAnd port before its body is
/// read or parsed, so a request for a device that does not exist costs at most reading
/// 64 KiB, however large a body it announces.
enum DeviceDoor {
    /// A phone's body is at most this (a fix is a few hundred bytes): past it, 413 from the
    /// `Content-Length` alone, whatever `--max-body` allows elsewhere.
    static let maxBodyBytes = 64 * 1024

    /// The path a request is routed by: the OsmAnd port answers its protocol at `/`.
    static func routedPath(_ request: HTTPRequest) -> String {
        request.isSecondListener && request.path == "/" ? "/v1/osmand" : request.path
    }

    /// The device a phone's request names without its body: OsmAnd's `id` (or `deviceid`)
    /// in the query, or the OwnTracks path. Nil when only the body can tell.
    static func deviceBeforeBody(_ request: HTTPRequest, route: APIRoute) -> String? {
        switch route {
        case .ownTracks(let id):
            return id
        case .osmandGet, .osmandPost:
            for name in ["id", "deviceid"] {
                if let id = request.queryValue(name)?.trimmingCharacters(in: .whitespaces), !id.isEmpty { return id }
            }
            return nil
        default:
            return nil
        }
    }

    /// The device a whole request names: a form body's id wins over the query's (as the
    /// OsmAnd parser reads them), and Traccar Client's JSON names its `device_id`; both are
    /// found by a scan of the body's bytes, without parsing the rest of it.
    static func device(_ request: HTTPRequest, route: APIRoute) -> String? {
        if case .osmandPost = route, let id = OsmAndRequest.deviceID(formBody: request.body) ?? OsmAndRequest.deviceID(jsonBody: request.body) {
            return id
        }
        return deviceBeforeBody(request, route: route)
    }
}
