import Foundation
import TrackHubSync
import TrackHubCore
import TrackHubProtocol

/// `--stop-link-share` (PROTOCOL 17): where a trip's stops go and how their links are made.
///
/// The stops lie ahead of where the courier will be when the run ends, between there and the
/// route's end, so no stop is reached during the run: every stop-link viewer stays subscribed
/// for the whole window, and with `visibleWithinStops` 1 the first two stops' viewers see the
/// courier while the third's stays hidden (it gets `stop` messages only), a steady mix to
/// measure.
enum StopLinkPlan {
    /// Stops per trip.
    static let stopsPerTrip = 3
    /// The links' `visible_within_stops`.
    static let visibleWithinStops = 1

    /// The stop ids: `s1`, `s2`, … in route order.
    static func id(_ k: Int) -> String { "s\(k + 1)" }

    /// Along-route metres of the stops: evenly spaced between `reachM` (where the courier is
    /// at the end of the run) and the route's end.
    static func alongs(reachM: Double, lengthM: Double) -> [Double] {
        let from = min(reachM, lengthM)
        let room = lengthM - from
        return (0..<stopsPerTrip).map { k in from + room * Double(k + 1) / Double(stopsPerTrip + 1) }
    }

    /// The stop-link viewers: viewer `n` (from 0) is one when ⌊(n + 1)·share⌋ passes ⌊n·share⌋,
    /// so any count of viewers has ⌊count·share⌋ of them, spread evenly (0.33: every third).
    static func isOnStopLink(viewer n: Int, share: Double) -> Bool {
        share > 0 && (Double(n + 1) * share).rounded(.down) > (Double(n) * share).rounded(.down)
    }
}

extension LoadRun {
    /// The stops of a trip's create request (`stopAlongs` as waypoints with ids).
    func stopWaypoints(of trip: TripLoad) -> (points: [GeoPoint], details: [StopDetails]) {
        let route = routes[trip.route]
        let points = trip.stopAlongs.map { along -> GeoPoint in
            let p = route.point(at: along)
            return GeoPoint(lat: p.lat, lon: p.lon)
        }
        let details = trip.stopAlongs.indices.map { StopDetails(id: StopLinkPlan.id($0), name: "Order \($0 + 1)") }
        return (points, details)
    }

    /// Makes one share link per created trip and stop (`POST /v1/trips/{id}/share {stop,
    /// visible_within_stops}`), before any connection opens. A link that could not be made is
    /// an HTTP failure; its viewers then connect with `--token` and follow the whole trip.
    func createStopLinks() {
        guard options.stopLinkShare > 0 else { return }
        let http = tripHTTP()
        var jobs: [(trip: Int, stop: Int)] = []
        for t in trips.indices where trips[t].created {
            trips[t].stopTokens = Array(repeating: nil, count: trips[t].stopAlongs.count)
            for k in trips[t].stopAlongs.indices { jobs.append((t, k)) }
        }
        let ids = jobs.map { trips[$0.trip].id }
        let bodies = jobs.map {
            String(decoding: ShareRequest(stop: StopLinkPlan.id($0.stop), visibleWithinStops: StopLinkPlan.visibleWithinStops).encoded(), as: UTF8.self)
        }
        let tokens = HubMutex<[Int: String]>([:])
        counters.httpFailures += HubHTTP.forEach(jobs.count) { i in
            guard let answer = http(ids[i]).request("POST", "/v1/trips/\(ids[i])/share", json: bodies[i]), answer.status == 201,
                  let token = (try? JSONParser().parse(Array(answer.body)))?["token"]?.stringValue else { return false }
            tokens.withLock { $0[i] = token }
            return true
        }
        for (i, token) in tokens.withLock({ $0 }) { trips[jobs[i].trip].stopTokens[jobs[i].stop] = token }
    }

    /// The share token a viewer connects with: its stop's link's, nil for a trip viewer (or
    /// when that link could not be made).
    func stopToken(ofViewer v: Int) -> String? {
        let k = viewers[v].stopLink
        guard k >= 0 else { return nil }
        let tokens = trips[Int(viewers[v].trip)].stopTokens
        return k < tokens.count ? tokens[k] : nil
    }

    /// A `stop` message to a stop-link viewer: counted; when `visible` changes, its latency
    /// stream starts again (as a new subscription does), so the time it saw nothing is never
    /// counted as a frame's latency.
    func stopMessage(_ v: Int, _ scan: ServerMessage) {
        counters.stopMessages += 1
        let visible = scan.bool("visible") == true
        guard visible != viewers[v].shown else { return }
        viewers[v].shown = visible
        viewers[v].firstSeq = -1
        viewers[v].recent.reset()
        let trip = trips[Int(viewers[v].trip)]
        viewers[v].nextMark = viewers[v].segments ? trip.segmentMarks.count : trip.frameMarks.count
    }
}
