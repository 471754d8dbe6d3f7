import Foundation
import TrackHubCore
import TrackHubProtocol
import TrackHubSync

extension LoadRun {
    /// Creates this shard's trips over HTTP (`POST /v1/trips` with the route), before any
    /// connection opens. A trip that could not be created is not driven.
    func createTrips() {
        guard options.target == .trackhub, !trips.isEmpty else { return }
        let http = tripHTTP()
        let ids = trips.map(\.id)
        let bodies = trips.map { trip in
            // `--stop-link-share`: stops with ids (PROTOCOL 17); without it, none, as before.
            let stops = stopWaypoints(of: trip)
            let request = CreateTripRequest(
                id: trip.id, route: .points(routes[trip.route].geoPoints), waypoints: stops.points,
                config: TripConfig(waitAtWaypoints: false), stops: stops.details)
            return String(decoding: ClientRequestBodies.createTrip(request), as: UTF8.self)
        }
        let failed = HubMutex<[Int]>([])
        _ = HubHTTP.forEach(bodies.count) { i in
            let ok = http(ids[i]).request("POST", "/v1/trips", json: bodies[i])?.status == 201
            if !ok { failed.withLock { $0.append(i) } }
            return ok
        }
        for i in failed.withLock({ $0 }) {
            trips[i].created = false
            trips[i].isOpen = false
        }
        counters.httpFailures += failed.withLock { $0.count }
    }

    /// The HTTP client for a trip's requests: its partition's hub with `--partition-url`
    /// (so that the hub creating or ending it is the one that applies it), else `--url`.
    func tripHTTP() -> @Sendable (String) -> HubHTTP {
        let main = HubHTTP(base: endpoint.httpBase, token: options.token)
        let byPartition = partitionEndpoints.map { HubHTTP(base: $0.httpBase, token: options.token) }
        return { trip in byPartition.isEmpty ? main : byPartition[TripPartition.of(trip, partitions: byPartition.count)] }
    }
}
