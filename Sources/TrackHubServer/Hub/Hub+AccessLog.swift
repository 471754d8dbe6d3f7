import TrackHubLWS
import TrackHubProtocol

/// PROTOCOL 14's per-event lines at `info`: one per HTTP answer and one per closed
/// WebSocket. Kept out of the routing code: the host reports, this formats.
extension Hub {
    func httpCompleted(request: HTTPRequest, status: Int, durationSeconds: Double) {
        // --max-refusal-rate: a refused credential counts against its address.
        services.access.refusals.recordAnswer(
            status: status, atDeviceDoor: request.isSecondListener || DeviceService.isDeviceEndpoint(request.path),
            peer: request.peerAddress, now: services.clock.wallMillis())
        guard HubLog.isEnabled(.info) else { return }
        // The path without its query (lws hands it over split already; cut again in case):
        // a query may hold a token, and the redaction is the second line of defence.
        var path = request.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "/"
        path = Self.loggedPath(path)
        HubLog.log(.info, "http request", [
            ("method", .string(request.method.rawValue)),
            ("path", .string(path)),
            ("status", .int(status)),
            ("duration_s", .seconds(durationSeconds)),
            ("peer", .string(request.peerAddress)),
        ])
    }

    /// The path as logged: a device id is its credential (PROTOCOL 11 and 14), so it is
    /// replaced by `{device}` wherever a path holds one (`/v1/owntracks/{device}`,
    /// `/v1/devices/{device}`); the OsmAnd endpoints carry it in the query, never logged.
    static func loggedPath(_ path: String) -> String {
        for prefix in ["/v1/owntracks/", "/v1/devices/"] where path.hasPrefix(prefix) && path.count > prefix.count {
            return prefix + "{device}"
        }
        return path
    }

    func logClosed(_ session: Session, close: WebSocketClose) {
        guard HubLog.isEnabled(.info) else { return }
        HubLog.log(.info, "websocket closed", [
            ("code", .int(close.code)),
            ("closed_by", .string(close.sender)),
            ("duration_s", .seconds(Double(systemMonotonicMicros() - session.openedMonotonic) / 1_000_000)),
            ("messages_in", .int(session.messagesIn)),
            ("messages_out", .int(session.messagesOut)),
            ("peer", .string(session.peerAddress)),
        ])
    }
}
