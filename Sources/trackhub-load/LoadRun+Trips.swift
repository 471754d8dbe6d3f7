import Foundation
import Synchronization
import TrackHubCore
import TrackHubProtocol

extension LoadRun {
    /// Creates this shard's trips over HTTP (`POST /v1/trips` with the route), before any
    /// connection opens. A trip that could not be created is not driven.
    func createTrips() {
        guard options.target == .trackhub, !trips.isEmpty else { return }
        let http = HubHTTP(base: endpoint.httpBase, token: options.token)
        let bodies = trips.map { trip in
            let request = CreateTripRequest(
                id: trip.id, route: .points(routes[trip.route].geoPoints), config: TripConfig(waitAtWaypoints: false))
            return String(decoding: ClientRequestBodies.createTrip(request), as: UTF8.self)
        }
        let failed = Mutex<[Int]>([])
        _ = HubHTTP.forEach(bodies.count) { i in
            let ok = http.request("POST", "/v1/trips", json: bodies[i])?.status == 201
            if !ok { failed.withLock { $0.append(i) } }
            return ok
        }
        for i in failed.withLock({ $0 }) {
            trips[i].created = false
            trips[i].isOpen = false
        }
        counters.httpFailures += failed.withLock { $0.count }
    }
}
