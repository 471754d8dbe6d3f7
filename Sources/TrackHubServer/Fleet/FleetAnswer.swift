import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// One viewport's answer, ready to encode.
struct FleetAnswer: Sendable {
    var viewport: Viewport
    var t: Int64
    var total: Int
    var truncated: Bool
    var items: [FleetItem]

    init(index: FleetIndex?, viewport: Viewport, t: Int64, maxItems: Int) {
        self.viewport = viewport
        self.t = t
        guard let index else {
            total = 0
            truncated = false
            items = []
            return
        }
        total = index.total
        let all = index.clusters(west: viewport.west, south: viewport.south, east: viewport.east, north: viewport.north, zoom: viewport.zoom)
        (items, truncated) = FleetIndex.truncate(all, maxItems: maxItems)
    }

    /// What decides "changed" (PROTOCOL 8): items, total and truncated; zoom and bbox are the key.
    func body() -> [UInt8] {
        FleetMessages.clustersContent(total: total, truncated: truncated, items: items)
    }

    /// The whole `clusters` message.
    /// `replyKey`: the viewport's key for its first answer (a later answer to the same viewport
    /// replaces it while it waits); nil for the updates of a fleet tick (latest-wins).
    func message(re: MessageID?, replyKey: String?) -> OutboundMessage {
        let bytes = FleetMessages.clusters(
            re: re, t: t, viewport: viewport, total: total, truncated: truncated, items: items, headroom: OutboundMessage.headroom)
        return OutboundMessage(bufferWithHeadroom: bytes, kind: replyKey.map { .viewportReply(key: $0) } ?? .clusters)
    }

    /// The HTTP body of `GET /v1/fleet/clusters` (a `clusters` message's fields, no `type`).
    func httpBody() -> [UInt8] {
        FleetMessages.clustersBody(t: t, viewport: viewport, total: total, truncated: truncated, items: items)
    }
}

extension Viewport {
    /// Viewports with the same key share one answer.
    var groupKey: String { "\(zoom)|\(west)|\(south)|\(east)|\(north)" }
}
