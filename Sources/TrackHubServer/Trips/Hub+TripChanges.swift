import TrackHubCore
import TrackHubProtocol

/// The answer to a carried-out trip command.
extension Hub {
    /// The answer to a trip command that was carried out: over the WebSocket (a `proceed`) an
    /// ack, over HTTP the trip.
    func answerDone(_ reply: Reply, trip id: String) {
        switch reply {
        case .webSocket(let connection, let re):
            fanout.enqueue(payload: ServerReplies.ack(re: re, trip: id, seq: nil, applied: true, reason: nil), to: connection)
        case .http(let connection):
            respondTrip(connection, id: id, status: 200)
        case .device(let connection, let source):
            replies.respondDevice(connection, source)
        }
    }
}
