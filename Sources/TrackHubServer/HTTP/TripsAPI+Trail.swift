import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// `GET /v1/trips/{id}/trail` (PROTOCOL 5 and 14): every acked fix, in GeoJSON, GPX or CSV,
/// read and encoded off the service thread a page at a time.
extension TripsAPI {
    /// The trail of a trip this hub has, once every answered write is readable (a trail
    /// shows every acked fix); 404 when this hub has no such trip.
    func trail(_ connection: ConnectionID, id: String, _ query: TrailQuery, format: TrailFormat) throws(ProtocolError) {
        guard trips[id] != nil else { throw .notFound("trip \(id) does not exist") }
        // Every acked fix is in the trail: read once the log's answered writes are readable.
        commands.afterAnsweredWrites { [self] in respondTrail(connection, id: id, query, format: format) }
    }

    /// The trail (PROTOCOL 5 and 14): GeoJSON, GPX or CSV, streamed page by page when it is
    /// longer than one page; a trail that fits in one page goes out whole, with its length.
    /// No page is read on the service thread: the mark and the first page on the store-read
    /// queue before the answer starts (a failure there is still a 503), each later page there
    /// when the host asks for it (`supplyTrailChunk`).
    private func respondTrail(_ connection: ConnectionID, id: String, _ query: TrailQuery, format: TrailFormat) {
        let server = serverName
        storage.read({ store throws(StoreError) in
            let body = try TrailBody.open(store: store, tripID: id, query: query, format: format, server: server)
            return (body, try body.firstPart())
        }) { [self] result in
            let body: TrailBody
            let first: [UInt8]
            switch result {
            case .success(let opened):
                (body, first) = opened
            case .failure(let error):
                return replies.respondError(connection, ProtocolError(.unavailable, "trail: \(error)"))
            }
            var headers = [("cache-control", "no-store")]
            if let name = format.attachmentName(trip: id) {
                headers.append(("content-disposition", "attachment; filename=\"\(name)\""))
            }
            var response = HTTPResponse(status: 200, contentType: format.contentType, headers: headers, body: first)
            if !body.fitsInOnePage {
                // Weak: the host keeps the response while it streams, and the hub owns both the
                // host and this service.
                response.requestChunk = { [weak self] connection in self?.supplyTrailChunk(connection, body, trip: id) }
            }
            replies.respond(connection, response)
        }
    }

    /// A streamed trail's next part, asked for by the host (service thread): read and encoded
    /// on the store-read queue, handed back on the service thread. The host asks for one part
    /// at a time, so a body has at most one page read ahead of what is being written. These
    /// reads do not hold the drain (`holdsDrain: false`): the answer is cut at stop anyway,
    /// as it always was; a part that comes back after its connection closed is dropped.
    private func supplyTrailChunk(_ connection: ConnectionID, _ body: TrailBody, trip: String) {
        storage.read({ _ throws(StoreError) in try body.nextChunk() }, holdsDrain: false) { [self] result in
            switch result {
            case .success(let part?):
                host.supplyChunk(connection, .bytes(part))
            case .success(nil):
                host.supplyChunk(connection, .end)
            case .failure(let error):
                logWarning("trail of \(trip): cut short (\(error))")
                host.supplyChunk(connection, .failure)
            }
        }
    }
}
