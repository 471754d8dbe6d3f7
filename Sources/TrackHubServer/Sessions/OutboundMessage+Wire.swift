import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// The server messages that fan out, encoded once by TrackHubProtocol straight into a buffer
/// with lws headroom and wrapped with the send-queue key their kind needs.
extension OutboundMessage {
    /// `frame` (PROTOCOL 4): latest-wins per trip (`slot` is the trip's queue key).
    static func frame(trip: String, seq: Int, _ frame: TripFrame, slot: Int) -> OutboundMessage {
        OutboundMessage(
            bufferWithHeadroom: ServerMessages.frame(trip: trip, seq: seq, frame, headroom: headroom), kind: .frame(tripSlot: slot))
    }

    /// `segment` (PROTOCOL 4): latest-wins per trip, like a frame.
    static func segment(trip: String, seq: Int, _ segment: TripSegment, slot: Int) -> OutboundMessage {
        OutboundMessage(
            bufferWithHeadroom: ServerMessages.segment(trip: trip, seq: seq, segment, headroom: headroom),
            kind: .frame(tripSlot: slot))
    }

    /// `snapshot` (PROTOCOL 4): a newer snapshot of the same trip replaces a waiting one,
    /// unless the waiting one answers a request (`re`): the client waits for that answer.
    static func snapshot(_ view: TripView, re: MessageID?, recovered: Bool?) -> OutboundMessage {
        OutboundMessage(
            bufferWithHeadroom: ServerMessages.snapshot(view, re: re, recovered: recovered, headroom: headroom),
            kind: re == nil ? .snapshot(trip: view.id) : .reliable)
    }
}
