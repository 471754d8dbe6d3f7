import TrackHubCore
import TrackHubProtocol

/// The fleet channel (PROTOCOL section 8). Filled in with the clustering index.
struct FleetState {
    var lastTick: Int64 = 0
}

extension Hub {
    func setViewport(_ id: ConnectionID, viewport: Viewport?, re: MessageID?) {
        sendError(to: id, re: re, ProtocolError(.unavailable, "viewport: the fleet channel is not available yet"))
    }

    func fleetViewportRemoved(_ id: ConnectionID, key: String) {}

    func fleetTickIfDue(now: Int64) {}

    func fleetClustersHTTP(_ connection: ConnectionID, _ query: ClustersQuery, now: Int64) throws(ProtocolError) {
        throw .unavailable("bbox: the fleet channel is not available yet")
    }
}
