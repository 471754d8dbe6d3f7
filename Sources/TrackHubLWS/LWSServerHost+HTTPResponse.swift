import CLibWebSockets

/// Writing HTTP answers: the status line and headers (the delegate's `responseHeaders`
/// added to each), a whole body in 64 KiB writes, a streamed body framed chunked here
/// (lws 4.1.6 does not), one write per writeable callback, then keep-alive or close.
///
/// A streamed body's later parts are pulled: the host asks with the response's
/// `requestChunk`, the producer answers with `supplyChunk` (at once or later, from a read on
/// another queue), and the writeable callback writes only parts already supplied. Nothing on
/// the service thread waits for a producer.
extension LWSServerHost {
    /// Sends an HTTP response to a request delivered earlier (possibly much later, e.g. after a commit).
    public func respond(_ id: ConnectionID, _ response: HTTPResponse) {
        guard let wsi = sockets[id], let exchange = http[id], exchange.response == nil else { return }
        var response = response
        response.headers += delegate?.responseHeaders(for: exchange.request) ?? []
        exchange.response = response
        lws_callback_on_writable(wsi)
    }

    /// `LWS_CALLBACK_HTTP_WRITEABLE`: the headers first, then one part of the body.
    func writeHTTP(wsi: OpaquePointer, id: ConnectionID) -> Int32 {
        guard let state = http[id], let response = state.response else { return 0 }
        let pre = OutboundMessage.headroom
        if !state.headersSent {
            // A streamed body is sent chunked, framed here: lws 4.1.6 does not do it. Given
            // LWS_ILLEGAL_HTTP_CONTENT_LEN, `lws_add_http_common_headers` only leaves out the
            // length and adds `connection: close` (the body then ends when the socket does),
            // and `lws_write(LWS_WRITE_HTTP)` sends bytes as they are. Writing the status and
            // headers ourselves keeps the connection reusable.
            let streamed = response.isStreamed
            var headers = response.headers
            if state.closeAfterResponse { headers.append(("connection", "close")) }
            if streamed { headers.insert(contentsOf: [("content-type", response.contentType), ("transfer-encoding", "chunked")], at: 0) }
            var buffer = [UInt8](repeating: 0, count: pre + 2048 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 8 })
            let ok = buffer.withUnsafeMutableBufferPointer { raw -> Bool in
                guard let base = raw.baseAddress else { return false }
                let start = base + pre
                var cursor: UnsafeMutablePointer<UInt8>? = start
                let end = base + raw.count - 1
                let began = streamed
                    ? lws_add_http_header_status(wsi, UInt32(response.status), &cursor, end)
                    : lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType.isEmpty ? nil : response.contentType, lws_filepos_t(response.body.count), &cursor, end)
                if began != 0 { return false }
                for header in headers {
                    let name = header.name.lowercased() + ":"
                    let added = name.withCString { namePointer in
                        header.value.withCString { valuePointer in
                            namePointer.withMemoryRebound(to: UInt8.self, capacity: name.utf8.count + 1) { n in
                                valuePointer.withMemoryRebound(to: UInt8.self, capacity: header.value.utf8.count + 1) { v in
                                    lws_add_http_header_by_name(wsi, n, v, Int32(header.value.utf8.count), &cursor, end)
                                }
                            }
                        }
                    }
                    if added != 0 { return false }
                }
                return lws_finalize_write_http_header(wsi, start, &cursor, end) == 0
            }
            if !ok { return -1 }
            state.headersSent = true
            if response.body.isEmpty && !streamed {
                return finishHTTP(wsi: wsi, id: id)
            }
            lws_callback_on_writable(wsi)
            return 0
        }
        if response.isStreamed {
            return writeStreamedHTTP(wsi: wsi, id: id, state: state)
        }
        // One chunk per writeable callback; lws buffers what the socket does not take.
        let chunkSize = 64 * 1024
        let remaining = response.body.count - state.bodyOffset
        let take = min(chunkSize, remaining)
        let isLast = take == remaining
        var chunk = [UInt8](repeating: 0, count: pre + take)
        chunk.replaceSubrange(pre..<(pre + take), with: response.body[state.bodyOffset..<(state.bodyOffset + take)])
        let written = chunk.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return isLast
                ? trackhub_lws_write_http_final(wsi, base + pre, take)
                : trackhub_lws_write_http(wsi, base + pre, take)
        }
        if written < 0 { return -1 }
        state.bodyOffset += take
        if isLast { return finishHTTP(wsi: wsi, id: id) }
        trackhub_lws_renew_http_timeout(wsi, Self.httpStallTimeoutSeconds)
        lws_callback_on_writable(wsi)
        return 0
    }

    /// How long an HTTP exchange may go without progress (headers read to answer ready, or
    /// one write of its body to the next) before lws drops it; lws's `timeout_secs` too.
    static let httpStallTimeoutSeconds: Int32 = 20

    /// A streamed body's next part, answering `requestChunk` (service thread). Kept until the
    /// writeable callback writes it. A connection that closed meanwhile is gone from `http`
    /// (and a later request on the same socket has another id), so its late part is dropped.
    public func supplyChunk(_ id: ConnectionID, _ chunk: HTTPBodyChunk) {
        guard let wsi = sockets[id], let exchange = http[id], exchange.chunkRequested else { return }
        exchange.chunkRequested = false
        exchange.suppliedChunk = chunk
        lws_callback_on_writable(wsi)
    }

    /// Asks the producer for the next part unless one is held or on its way (at most one
    /// ahead). The producer may answer inside this call: the state is set before it runs.
    private func requestNextChunk(_ id: ConnectionID, _ exchange: HTTPExchange) {
        guard !exchange.chunkRequested, exchange.suppliedChunk == nil, let request = exchange.response?.requestChunk else { return }
        exchange.chunkRequested = true
        request(id)
    }

    /// One chunk of a streamed body per writeable callback: `body` first, then the parts
    /// supplied, each framed `<hex size>\r\n<data>\r\n`; `0\r\n\r\n` once `.end` is supplied.
    /// The next part is asked for as this one is written, so producing it overlaps the write.
    /// With nothing supplied yet the callback writes nothing: `supplyChunk` asks for another.
    private func writeStreamedHTTP(wsi: OpaquePointer, id: ConnectionID, state: HTTPExchange) -> Int32 {
        let part: HTTPBodyChunk
        if !state.firstPartSent {
            part = .bytes(state.response?.body ?? [])
            state.firstPartSent = true
            state.response?.body = []  // not kept while the rest streams
        } else if let supplied = state.suppliedChunk {
            part = supplied
            state.suppliedChunk = nil
        } else {
            requestNextChunk(id, state)
            return 0
        }
        let payload: [UInt8]?
        switch part {
        case .failure:
            return -1  // cut short: no last chunk
        case .end:
            payload = nil
        case .bytes(let bytes):
            if bytes.isEmpty {  // a chunk of size 0 would end the body
                requestNextChunk(id, state)
                if state.suppliedChunk != nil { lws_callback_on_writable(wsi) }
                return 0
            }
            payload = bytes
            requestNextChunk(id, state)
        }
        let pre = OutboundMessage.headroom
        var chunk = [UInt8](repeating: 0, count: pre)
        if let payload {
            chunk.reserveCapacity(pre + payload.count + 16)
            chunk.append(contentsOf: String(payload.count, radix: 16).utf8)
            chunk.append(contentsOf: [0x0D, 0x0A])
            chunk.append(contentsOf: payload)
            chunk.append(contentsOf: [0x0D, 0x0A])
        } else {
            chunk.append(contentsOf: "0\r\n\r\n".utf8)
        }
        let written = chunk.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return payload == nil
                ? trackhub_lws_write_http_final(wsi, base + pre, raw.count - pre)
                : trackhub_lws_write_http(wsi, base + pre, raw.count - pre)
        }
        if written < 0 { return -1 }
        if payload == nil { return finishHTTP(wsi: wsi, id: id) }
        trackhub_lws_renew_http_timeout(wsi, Self.httpStallTimeoutSeconds)
        // A part already supplied (the producer answered at once) is written next time round.
        if state.suppliedChunk != nil { lws_callback_on_writable(wsi) }
        return 0
    }

    /// The answer is out: reported, then the connection is kept for the next request or closed.
    private func finishHTTP(wsi: OpaquePointer, id: ConnectionID) -> Int32 {
        if let exchange = http[id] { reportHTTPCompleted(exchange, status: exchange.response?.status ?? 0) }
        let close = http[id]?.closeAfterResponse ?? false
        http[id] = nil
        sockets[id] = nil
        bodyDeadlines[id] = nil
        if close { return -1 }
        if lws_http_transaction_completed(wsi) != 0 { return -1 }
        return 0
    }

    func reportHTTPCompleted(_ exchange: HTTPExchange, status: Int) {
        let seconds = Double(monotonicMicros() - exchange.startedAt) / 1_000_000
        delegate?.httpCompleted(request: exchange.request, status: status, durationSeconds: seconds)
    }
}
