import TrackHubLWS
import TrackHubProtocol

/// PROTOCOL 14's per-event lines at `info`: one per HTTP answer and one per closed
/// WebSocket. Kept out of the routing code: the host reports, this formats.
extension Hub {
    func httpCompleted(request: HTTPRequest, status: Int, durationSeconds: Double) {
        guard HubLog.isEnabled(.info) else { return }
        // The path without its query (lws hands it over split already; cut again in case):
        // a query may hold a token, and the redaction is the second line of defence.
        var path = request.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "/"
        // A device id is its credential on the device endpoints (PROTOCOL 11): not logged.
        if path.hasPrefix("/v1/owntracks/") { path = "/v1/owntracks/{device}" }
        HubLog.log(.info, "http request", [
            ("method", .string(request.method.rawValue)),
            ("path", .string(path)),
            ("status", .int(status)),
            ("duration_s", .seconds(durationSeconds)),
            ("peer", .string(request.peerAddress)),
        ])
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
