import CLibWebSockets
import TrackHubProtocol

/// The HTTP exchange up to the delegate: a request's method, path and headers, the
/// per-address limit, body framing (PROTOCOL 1: `Content-Length` only, `HTTPFraming`), a
/// secured hub's refusal from the headers, the body limit, reading the body in place, the
/// slow-body expiry, and the host's own refusals (answered with `HTTPBodies.error`,
/// then the connection closes).
extension LWSServerHost {
    /// `LWS_CALLBACK_HTTP`: the headers are in.
    func beginHTTP(wsi: OpaquePointer, user: UnsafeMutableRawPointer, uri: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        let id = assignID(user: user, wsi: wsi)
        var uriPointer: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let methodIndex = lws_http_get_uri_and_method(wsi, &uriPointer, &uriLength)
        let method: HTTPMethod
        switch methodIndex {
        case Int32(LWSHUMETH_GET): method = .get
        case Int32(LWSHUMETH_POST): method = .post
        case Int32(LWSHUMETH_PUT): method = .put
        case Int32(LWSHUMETH_DELETE): method = .delete
        case Int32(LWSHUMETH_HEAD): method = .head
        case Int32(LWSHUMETH_OPTIONS): method = .options
        case Int32(LWSHUMETH_PATCH): method = .patch
        default: method = .other
        }
        let path: String
        if let uri, length > 0 {
            path = String(decoding: UnsafeRawBufferPointer(start: uri, count: length), as: UTF8.self)
        } else {
            path = "/"
        }
        let peer = peerAddress(wsi)
        let request = HTTPRequest(
            connection: id, method: method, path: path, query: queryArguments(wsi),
            origin: header(wsi, trackhub_tok_origin()), host: header(wsi, trackhub_tok_host()),
            authorization: header(wsi, trackhub_tok_authorization()), peerAddress: peer, body: [])
        var secondAware = request
        secondAware.isSecondListener = isOnSecondListener(wsi)
        let exchange = HTTPExchange(request: secondAware)
        http[id] = exchange
        if !connectionsPerAddress.admit(wsi, peer: peer) {
            refuseFromHost(id, exchange, ProtocolError(.rateLimited, "too many connections from \(peer)"), reason: .tooManyConnections)
            return 0
        }
        // PROTOCOL 1: bodies are framed by Content-Length alone; anything else is refused
        // before the request runs, and the connection closes (its next request's start is unknown).
        let framing: HTTPFraming
        do {
            framing = try HTTPFraming.decide(
                requiresLength: method == .post || method == .put,
                contentLength: rawHeader(wsi, trackhub_tok_content_length()),
                hasTransferEncoding: lws_hdr_total_length(wsi, lws_token_indexes(rawValue: UInt32(trackhub_tok_transfer_encoding()))) > 0)
        } catch {
            refuseFromHost(id, exchange, error, reason: .framing)
            return 0
        }
        guard case .body(let declaredLength) = framing else {
            dispatchHTTP(id: id, exchange)
            return 0
        }
        // Identity before work: a secured hub checks the token from the headers, a phone
        // endpoint its device and its own body limit; a body refused here is never read.
        if let refusal = delegate?.httpRefusalBeforeBody(secondAware, declaredLength: declaredLength) {
            refuseFromHost(id, exchange, refusal, reason: HTTPRefusalReason(beforeBody: refusal.code))
            return 0
        }
        if declaredLength > options.maxBodyBytes {
            refuseFromHost(id, exchange, ProtocolError(.tooLarge, "body is over the limit of \(options.maxBodyBytes) bytes"), reason: .tooLarge)
            return 0
        }
        exchange.expectedLength = declaredLength
        // Grown as it arrives, not reserved whole: a client that announces 4 MiB and sends
        // nothing holds only what it sent.
        exchange.body.reserveCapacity(min(declaredLength, 64 * 1024))
        if options.bodyTimeoutMicros > 0 { bodyDeadlines[id] = monotonicMicros() + options.bodyTimeoutMicros }
        return 0  // the body follows: LWS_CALLBACK_HTTP_BODY, then _COMPLETION
    }

    /// `LWS_CALLBACK_HTTP_BODY`: one chunk of the body.
    func receiveBody(_ id: ConnectionID, _ exchange: HTTPExchange, input: UnsafeMutableRawPointer?, length: Int) {
        // Answered already (refused from its headers, or timed out): the rest is not read
        // into memory, and the connection closes once the answer is out.
        if exchange.response != nil || exchange.dispatched { return }
        if let input, length > 0 {
            if exchange.body.count + length > exchange.expectedLength {
                refuseFromHost(id, exchange, ProtocolError(.badRequest, "Content-Length: the body is longer than announced"), reason: .framing)
                return
            }
            // In place: `exchange` is a class the dictionary holds, so appending never copies
            // the body received so far (linear in the body's size, PROTOCOL 1).
            exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
    }

    /// `LWS_CALLBACK_HTTP_BODY_COMPLETION`: the whole body is in; the request goes to the delegate.
    func bodyCompleted(_ id: ConnectionID, _ exchange: HTTPExchange) {
        bodyDeadlines[id] = nil
        if !exchange.dispatched && exchange.response == nil { dispatchHTTP(id: id, exchange) }
    }

    /// `LWS_CALLBACK_CLOSED_HTTP`: an answer cut short is reported with status 0.
    func httpClosed(_ id: ConnectionID) {
        let wasKnown = sockets[id] != nil
        if let unfinished = http[id] { reportHTTPCompleted(unfinished, status: 0) }
        forget(id)
        if wasKnown { delegate?.connectionClosed(id, close: .none) }
    }

    func dispatchHTTP(id: ConnectionID, _ exchange: HTTPExchange) {
        exchange.dispatched = true
        var request = exchange.request
        request.body = exchange.body
        exchange.body = []  // the hub holds it now; not kept twice
        delegate?.httpRequest(request)
    }

    /// Answers a request from the host itself, without running it, and closes the
    /// connection after the answer (the body, if any, was not read).
    func refuseFromHost(_ id: ConnectionID, _ exchange: HTTPExchange, _ error: ProtocolError, reason: HTTPRefusalReason) {
        bodyDeadlines[id] = nil
        exchange.dispatched = true
        exchange.closeAfterResponse = true
        exchange.body = []
        delegate?.httpRefused(exchange.request, reason: reason)
        respond(id, HTTPResponse(status: reason == .bodyTimeout ? 408 : error.httpStatus, body: HTTPBodies.error(error)))
    }

    /// PROTOCOL 1: a body must be in within `--body-timeout` of the end of its headers; lws's
    /// own idle timeout is re-armed by every chunk, so a client sending a byte now and then
    /// would hold its connection forever. Runs on every timer tick; looks only at requests
    /// whose body is still arriving.
    func expireSlowBodies(now: Int64) {
        guard !bodyDeadlines.isEmpty else { return }
        for (id, deadline) in bodyDeadlines where deadline <= now {
            guard let exchange = http[id] else {
                bodyDeadlines[id] = nil
                continue
            }
            let seconds = Double(options.bodyTimeoutMicros) / 1_000_000
            refuseFromHost(id, exchange, ProtocolError(.badRequest, "body: not received within the body timeout of \(seconds) s"), reason: .bodyTimeout)
        }
    }
}
