import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Following one stop (PROTOCOL 17): a stop follower's frames and segments carry the numbers
/// to its stop, encoded once per distinct stop among the trip's followers (per trip and stop
/// per tick, never per subscriber); a new route that drops a stop ends what follows it.
extension TripPublisher {
    /// The distinct stops the trip's followers in `mode` follow (empty: none).
    private func followedStops(trip id: String, mode: SubscriptionMode) -> Set<StopRef> {
        guard let stops = fanout.subscriptions.stopFollowers(of: id), let followers = fanout.subscriptions.followers(of: id)
        else { return [] }
        var distinct = Set<StopRef>()
        for (connection, stop) in stops where followers[connection] == mode { distinct.insert(stop) }
        return distinct
    }

    /// The frame per followed stop, its numbers taken to that stop.
    func stopFrames(trip id: String, seq: Int, _ frame: TripFrame, slot: Int) -> [StopRef: OutboundMessage] {
        let stops = followedStops(trip: id, mode: .frames)
        guard !stops.isEmpty, let trip = trips[id]?.trip else { return [:] }
        var messages: [StopRef: OutboundMessage] = [:]
        for stop in stops {
            messages[stop] = OutboundMessage.frame(trip: id, seq: seq, trip.frame(frame, towardStop: stop), slot: slot)
        }
        return messages
    }

    /// The segment per followed stop, its numbers taken to that stop.
    func stopSegments(trip id: String, seq: Int, _ segment: TripSegment, slot: Int) -> [StopRef: OutboundMessage] {
        let stops = followedStops(trip: id, mode: .segments)
        guard !stops.isEmpty, let trip = trips[id]?.trip else { return [:] }
        var messages: [StopRef: OutboundMessage] = [:]
        for stop in stops {
            messages[stop] = OutboundMessage.segment(trip: id, seq: seq, trip.segment(segment, towardStop: stop), slot: slot)
        }
        return messages
    }

    /// Ends every subscription that follows one of `removed` (waypoint ids a new route
    /// dropped) with `unsubscribed {trip, reason: "stop_removed"}`. The hook for whatever
    /// else follows a stop (links) is `stopsRemoved`, called with the same ids.
    func endStopFollowers(trip id: String, removed: [String]) {
        guard !removed.isEmpty else { return }
        let gone = Set(removed.map { StopRef.waypoint(id: $0) })
        for (connection, stop) in fanout.subscriptions.stopFollowers(of: id) ?? [:] where gone.contains(stop) {
            fanout.unsubscribe(connection, from: id, slot: trips[id]?.slot)
            fanout.enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: id, reason: "stop_removed"), to: connection)
        }
        stopsRemoved(id, removed)
    }
}

/// What a link for one stop's snapshot depends on besides the trip (PROTOCOL 17): its stop and
/// `visible_within_stops`. A new route's snapshot is encoded once per such pair among the links.
struct LinkViewKey: Hashable {
    /// The stop the link follows.
    let stop: StopRef
    /// From how many stops before its own the courier is shown to it.
    let visibleWithinStops: Int
}

extension TripView {
    /// This view as a link for one stop sees it (PROTOCOL 17): the customer's, taken to its
    /// stop, with only what its rules show.
    func forStopLink(_ key: LinkViewKey) -> TripView {
        var view = self
        view.audience = .customer
        view.stop = key.stop
        view.stopLinkVisibleWithinStops = key.visibleWithinStops
        view.trail = []
        return view
    }
}
