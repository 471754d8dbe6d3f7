import TrackHubProtocol

/// The customers of a multi-stop trip (PROTOCOL 17, `simulate --stops`): for each stop the
/// rider's trip has, a customer asks the hub for that stop's link, follows it on a WebSocket of
/// its own as the customer's page does, and leaves a one-line summary in the stats when it ends
/// (`arrived` at its stop, its stop removed, the trip ended).
extension SimulatedCourier {
    /// One link request per stop of trip `id`, just created from `plan`; none for a trip without
    /// stops or with `SimulationSettings.followsStopLinks` off.
    mutating func followStops(trip id: String, plan: TripPlan, now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        // Whoever still follows the previous trip is done with it.
        for link in customers.keys.sorted() {
            customers[link]?.finish("trip ended", now: now)
            _ = finishCustomer(link, stats: &stats)
        }
        guard settings.followsStopLinks, let stops = plan.stops(rider: rider) else { return [] }
        var actions: [CourierAction] = []
        for stop in stops {
            let link = nextLink
            nextLink += 1
            let request = takeRequestID()
            linkRequests[request] = link
            customers[link] = StopCustomer(link: link, trip: id, stop: stop.id, stopName: stop.name)
            let body = ShareRequest(stop: stop.id, visibleWithinStops: settings.linkVisibleWithinStops).encoded()
            actions.append(.http(HTTPCall(id: request, method: "POST", path: "/v1/trips/\(id)/share", body: body)))
        }
        return actions
    }

    /// The answer to link request `request`, or nil when `request` is not one: with the link
    /// (201) the customer connects presenting its token; an open hub issues no links (409), so
    /// the customer connects without one and follows the stop with `subscribe {stop}`.
    mutating func linkAnswered(request: Int, status: Int, body: [UInt8], stats: inout SimulationStats) -> [CourierAction]? {
        guard let link = linkRequests.removeValue(forKey: request) else { return nil }
        guard var customer = customers[link] else { return [] }
        if status == 201, let token = (try? JSONParser().parse(body))?["token"]?.stringValue {
            customer.way = .link(token: token)
        } else if status == 409 {
            customer.way = .stopSubscription
        } else {
            let text = String(decoding: body.prefix(300), as: UTF8.self)
            stats.recordError("rider \(rider + 1): POST /v1/trips/\(customer.trip)/share for \(customer.stop) answered \(status) \(text)")
            customers[link] = nil
            return []
        }
        customers[link] = customer
        if case .link(let token) = customer.way { return [.openLink(link: link, token: token)] }
        return [.openLink(link: link, token: nil)]
    }

    /// A customer's connection opened, brought a message, or closed.
    mutating func customerEvent(_ event: TransportEvent, now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        switch event {
        case .linkOpened(_, let link):
            guard var customer = customers[link] else { return [.closeLink(link: link)] }
            customer.subscribedAt = now
            customers[link] = customer
            return [.sendLink(link: link, text: customer.subscribeMessage)]
        case .linkMessage(_, let link, let bytes):
            guard var customer = customers[link] else { return [] }
            customer.receive(ServerMessage(bytes), now: now)
            customers[link] = customer
            return customer.isDone ? finishCustomer(link, stats: &stats) : []
        case .linkClosed(_, let link, let code, let reason):
            guard customers[link] != nil else { return [] }
            customers[link]?.finish("connection closed (\(code.map(String.init) ?? "no code") \(reason))", now: now)
            _ = finishCustomer(link, stats: &stats)
            return []
        default:
            return []
        }
    }

    /// Takes customer `link` out, records its summary (and, as an error, any position it got
    /// while the hub said the courier was hidden), and closes its connection.
    mutating func finishCustomer(_ link: Int, stats: inout SimulationStats) -> [CourierAction] {
        guard let customer = customers.removeValue(forKey: link) else { return [] }
        stats.recordLink(customer.summary)
        if customer.positionsWhileHidden > 0, case .link = customer.way {
            stats.recordError("rider \(rider + 1): the link for \(customer.stop) of \(customer.trip) got \(customer.positionsWhileHidden) segments while the courier was hidden from it")
        }
        return [.closeLink(link: link)]
    }
}
