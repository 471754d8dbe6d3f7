import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Every answer to a client's request, in the form its door expects: over the WebSocket an
/// `ack` or `error` queued on the session (Fanout), over HTTP a JSON response, to a phone app
/// its own success form (PROTOCOL 4, 11, 14). Errors are counted by code here, and nowhere
/// else, so `/metrics` sees every one.
///
/// Threads: the hub's service thread only (it writes through the host and the fan-out).
final class Replies {
    private let host: any ServerHost
    private let fanout: Fanout
    private let metrics: HubMetrics
    /// What the hub asks of couriers (PROTOCOL 18): told of every fix acked on a WebSocket, and
    /// asked what an OwnTracks answer carries.
    private let cadence: CadenceService

    init(host: any ServerHost, fanout: Fanout, metrics: HubMetrics, cadence: CadenceService) {
        self.host = host
        self.fanout = fanout
        self.metrics = metrics
        self.cadence = cadence
    }

    // MARK: - HTTP

    /// A JSON answer that no cache keeps.
    func respond(_ connection: ConnectionID, status: Int, json: [UInt8]) {
        respond(connection, HTTPResponse(status: status, headers: [("cache-control", "no-store")], body: json))
    }

    /// Any HTTP answer, as given.
    func respond(_ connection: ConnectionID, _ response: HTTPResponse) {
        host.respond(connection, response)
    }

    /// `201` with the trip and its `Location` (PROTOCOL 14).
    func respondCreated(_ connection: ConnectionID, id: String, json: [UInt8]) {
        respond(connection, HTTPResponse(status: 201, headers: [("cache-control", "no-store"), ("location", "/v1/trips/\(id)")], body: json))
    }

    /// The error body of PROTOCOL 4 with the code's HTTP status, counted by code.
    func respondError(_ connection: ConnectionID, _ error: ProtocolError) {
        metrics.errorsOut[error.code.rawValue, default: 0] += 1
        respond(connection, status: error.code.httpStatus, json: HTTPBodies.error(error))
    }

    // MARK: - Phone apps (PROTOCOL 11)

    /// The success answer in the app's own form: OsmAnd an empty 200, OwnTracks a list of
    /// messages for the phone, `[]` unless `settingIntervalMs` (PROTOCOL 18: OwnTracks's own
    /// `setConfiguration`, `OwnTracksAnswer`).
    func respondDevice(_ connection: ConnectionID, _ source: DeviceFix.Source, settingIntervalMs: Int64? = nil) {
        switch source {
        case .osmand:
            respond(connection, HTTPResponse(status: 200, contentType: "text/plain", headers: [("cache-control", "no-store")], body: []))
        case .owntracks:
            respond(connection, status: 200, json: OwnTracksAnswer.body(settingIntervalMs: settingIntervalMs))
        }
    }

    /// A refused device request, counted by reason (the error code).
    func respondDeviceError(_ connection: ConnectionID, _ source: DeviceFix.Source, _ error: ProtocolError) {
        metrics.deviceRefusals[error.code.rawValue, default: 0] += 1
        respondError(connection, error)
    }

    // MARK: - WebSocket

    /// An `error` reply, counted by code.
    func sendError(to id: ConnectionID, re: MessageID?, _ error: ProtocolError) {
        metrics.errorsOut[error.code.rawValue, default: 0] += 1
        fanout.enqueue(payload: ServerReplies.error(re: re, error), to: id)
    }

    // MARK: - Commands, whatever their door

    /// The acks of fixes: one `ack` per fix over the WebSocket, one body of acks over HTTP,
    /// the app's success form to a phone (200 whether applied or stored as refused: a phone
    /// resends anything else, PROTOCOL 11). Both command logs answer fixes here, so this is
    /// where cadence (PROTOCOL 18) hears of them: after the acks, a WebSocket courier may be
    /// sent `cadence`; an OwnTracks phone's answer may carry its new reporting interval.
    func answerFixes(_ reply: Reply, trip: String, fixes: [FixInput], verdicts: [FixVerdict]) {
        switch reply {
        case .webSocket(let id, let re):
            for (fix, verdict) in zip(fixes, verdicts) {
                metrics.acksOut += 1
                fanout.enqueue(payload: ServerReplies.ack(re: re, trip: trip, seq: fix.seq, applied: verdict.isApplied, reason: verdict.refusal?.rawValue), to: id)
            }
            cadence.fixesAcked(trip: trip, on: id)
        case .http(let id):
            metrics.acksOut += fixes.count
            respond(id, status: 200, json: HTTPBodies.acks(trip: trip, fixes: fixes, verdicts: verdicts))
        case .device(let id, let source, let device):
            metrics.acksOut += fixes.count
            let interval = source == .owntracks ? cadence.intervalToTell(device: device, trip: trip) : nil
            respondDevice(id, source, settingIntervalMs: interval)
        }
    }

    /// Answers a command that could not be carried out.
    func answerFailure(_ reply: Reply, _ error: ProtocolError) {
        switch reply {
        case .webSocket(let id, let re): sendError(to: id, re: re, error)
        case .http(let id): respondError(id, error)
        case .device(let id, let source, _): respondDeviceError(id, source, error)
        }
    }
}
