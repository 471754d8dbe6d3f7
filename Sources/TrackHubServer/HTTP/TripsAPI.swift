import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// The trips of the HTTP API (PROTOCOL 5): the list, a trip with its recent trail, the trail
/// itself (TripsAPI+Trail), the answer to a trip command once carried out, and what a create
/// is checked against first (the capacity, a fresh id, the route). The commands themselves
/// go through the command log; the hub's router (`Hub.dispatch`) calls in here.
///
/// Threads: the service thread only, like the hub that owns it. `@unchecked Sendable` because
/// the store's answers (`TripStorage.read`, `@Sendable`) capture it; they run on the
/// service thread.
final class TripsAPI: @unchecked Sendable {
    /// Where the trail's reads wait for answered writes. Weak: the hub owns the log and makes
    /// it only once the hub exists (the log needs the hub), so the hub sets this when it
    /// builds the log (`Hub.makeCommandLog`), before the service thread runs.
    weak var commandLog: (any CommandDurability)?

    /// The trips answered about.
    let trips: TripTable
    /// Where a trip's trail is read, off the service thread.
    let storage: TripStorage
    /// Every answer, HTTP's or (a `proceed`) the WebSocket's.
    let replies: Replies
    /// The WebSocket side of an answer to a carried-out command (an ack).
    let fanout: Fanout
    /// The sockets a streamed trail's later parts are handed to.
    let host: any ServerHost
    /// The `now` of a trip's view once its trail is read.
    let clock: HubClock
    /// The server's name, in a GPX trail's `creator`.
    let serverName: String
    /// `--max-trips`: trips not `ended` at most (PROTOCOL 1).
    let maxTrips: Int
    /// `--max-route-points`: points of a route at most.
    let maxRoutePoints: Int

    /// The API over `trips`, answering through `replies` and `fanout`.
    init(trips: TripTable, storage: TripStorage, replies: Replies, fanout: Fanout, host: any ServerHost, clock: HubClock, serverName: String, maxTrips: Int, maxRoutePoints: Int) {
        self.trips = trips
        self.storage = storage
        self.replies = replies
        self.fanout = fanout
        self.host = host
        self.clock = clock
        self.serverName = serverName
        self.maxTrips = maxTrips
        self.maxRoutePoints = maxRoutePoints
    }

    /// The command log, which the hub has set by the time any request arrives.
    var commands: any CommandDurability {
        guard let commandLog else { preconditionFailure("TripsAPI: used before the hub built its command log") }
        return commandLog
    }

    // MARK: - What a create is checked against

    /// PROTOCOL 1: at most `--max-trips` trips not `ended` (creates in flight included). The
    /// exact count walks every trip, so it is taken only when the cheap upper bound (every
    /// trip held, ended ones too) reaches the limit.
    func checkTripCapacity() throws(ProtocolError) {
        if trips.count + trips.creating.count < maxTrips { return }
        var open = trips.creating.count
        for entry in trips.entries.values where entry.trip.status != .ended { open += 1 }
        if open >= maxTrips {
            throw .tooLarge("trips: \(open) trips have not ended; the limit is \(maxTrips) (--max-trips)")
        }
    }

    /// A fresh random trip id (`t-` and 10 characters) no trip here has.
    func makeTripID() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        var id: String
        repeat {
            id = "t-" + String((0..<10).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        } while trips.isTaken(id)
        return id
    }

    /// Turns a validated route input into a core `Route`, with errors naming the field.
    func makeRoute(_ input: RouteInput?) throws(ProtocolError) -> Route? {
        try input?.makeRoute(maxPoints: maxRoutePoints)
    }

    // MARK: - GET /v1/trips, GET /v1/trips/{id}

    /// `GET /v1/trips`: the trips `visible` may list, by status, a page at a time.
    func listTrips(_ connection: ConnectionID, _ query: TripListQuery, now: Int64, visible: Grants = .everything) {
        let wanted = query.statuses.map(Set.init)
        // Bytewise order of ids (PROTOCOL 5), the same as comparing their UTF-8.
        let ids = trips.entries.keys.filter { id in
            guard visible.allowsListing(id) else { return false }
            if let after = query.after, !id.utf8.lexicographicallyPrecedes(after.utf8) && id != after {
                // keep ids strictly after `after`
            } else if query.after != nil {
                return false
            }
            guard let status = trips[id]?.trip.status else { return false }
            return wanted?.contains(status) ?? true
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let page = ids.prefix(query.limit)
        let views = page.map {
            TripView(id: $0, entry: trips[$0], trail: [], now: now, includeRoute: false, includeTrail: false, audience: ShareService.audience(of: visible, trip: $0))
        }
        replies.respond(connection, status: 200, json: HTTPBodies.tripList(views, next: ids.count > page.count ? page.last : nil))
    }

    /// `GET /v1/trips/{id}`: the trip as `grants` sees it, 404 when this hub has no such trip.
    func getTrip(_ connection: ConnectionID, id: String, grants: Grants) throws(ProtocolError) {
        guard trips[id] != nil else { throw .notFound("trip \(id) does not exist") }
        respondTrip(connection, id: id, status: 200, afterCommand: false, audience: ShareService.audience(of: grants, trip: id),
                    stopLink: grants.stopLink(id))
    }

    /// The trip with its last 100 fixes (PROTOCOL 5). The trail is read off the service
    /// thread; the body is built on it once the read is back, from the trip as it is then.
    /// A failed read answers `GET` with 503; after a command (which stands) the trip goes
    /// out without its trail, logged and counted.
    /// A share link's `audience` sees the customer's view (PROTOCOL 13), without a trail.
    /// A stop link's `stopLink` (PROTOCOL 17) sees what its snapshot would.
    func respondTrip(_ connection: ConnectionID, id: String, status: Int, afterCommand: Bool = true, audience: TripView.Audience = .full,
                     stopLink: (stop: StopRef, visibleWithinStops: Int)? = nil) {
        let count = audience == .customer ? 0 : 100
        storage.read({ store throws(StoreError) in try store.recentFixes(tripID: id, count: count) }) { [self] result in
            let trail: [StoredFix]
            switch result {
            case .success(let read):
                trail = read
            case .failure(let error) where !afterCommand:
                return replies.respondError(connection, ProtocolError(.unavailable, "trip \(id): the store could not be read (\(error)); try again"))
            case .failure(let error):
                logWarning("trip \(id): its trail could not be read for an answer (\(error)); sent without it")
                trail = []
            }
            var view = TripView(id: id, entry: trips[id], trail: trail, now: clock.wallMillis(), audience: audience)
            view.includeRouteSource = status == 201  // PROTOCOL 16: the create's answer says where its route came from
            if let stopLink {
                view.stop = stopLink.stop
                view.stopLinkVisibleWithinStops = stopLink.visibleWithinStops
            }
            let body = HTTPBodies.trip(view)
            if status == 201 { return replies.respondCreated(connection, id: id, json: body) }
            replies.respond(connection, status: status, json: body)
        }
    }

    // MARK: - Commands

    /// `POST /v1/trips/{id}/fixes` with no fix: nothing to store, answered here from what
    /// this hub knows of the trip.
    func answerNoFixes(_ connection: ConnectionID, trip id: String) throws(ProtocolError) {
        guard trips[id] != nil else { throw .notFound("trip \(id) does not exist") }
        replies.respond(connection, status: 200, json: HTTPBodies.noAcks)
    }

    /// The answer to a trip command that was carried out: over the WebSocket (a `proceed`) an
    /// ack, over HTTP the trip.
    func answerDone(_ reply: Reply, trip id: String) {
        switch reply {
        case .webSocket(let connection, let re):
            fanout.enqueue(payload: ServerReplies.ack(re: re, trip: id, seq: nil, applied: true, reason: nil), to: connection)
        case .http(let connection):
            respondTrip(connection, id: id, status: 200)
        case .device(let connection, let source, _):
            replies.respondDevice(connection, source)
        }
    }
}
