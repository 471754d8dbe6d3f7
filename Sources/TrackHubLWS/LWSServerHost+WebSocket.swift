import CLibWebSockets

/// WebSocket connection I/O: receiving (binary refused, fragments joined up to
/// `maxMessageBytes`), writing (direct writes, the writeable callback that pulls the
/// delegate's send queue one message at a time, pings), and closing (a code after what is
/// being written, a drop, the peer's close, the end of the connection).
extension LWSServerHost {
    // MARK: - Called by the delegate (service thread)

    /// Asks lws to call back when `id` can take more data.
    public func requestWritable(_ id: ConnectionID) {
        guard let wsi = sockets[id] else { return }
        lws_callback_on_writable(wsi)
    }

    /// Writes a WebSocket message at once, outside the writeable callback, when lws holds no
    /// unsent bytes for this connection. This is the common case for a reader that keeps up,
    /// and it costs one `send` instead of three system calls (arm POLLOUT, wait, send) for
    /// the callback route. If the kernel takes only part of it, lws keeps the rest and
    /// finishes it on its own; the next message then goes through the queue (`.mustQueue`).
    public func writeNow(_ id: ConnectionID, _ message: OutboundMessage) -> DirectWrite {
        guard let wsi = sockets[id], pendingCloses.isEmpty || pendingCloses[id] == nil else { return .mustQueue }
        if lws_partial_buffered(wsi) != 0 { return .mustQueue }
        let written = message.withPayloadPointer { trackhub_lws_write_text(wsi, $0, $1) }
        if written < 0 {
            trackhub_lws_kill_async(wsi)
            return .failed
        }
        return .written
    }

    /// Sends a WebSocket ping now; false when lws still holds unsent bytes for it (the
    /// connection is not reading, so the ping would only wait behind them).
    public func ping(_ id: ConnectionID) -> Bool {
        guard let wsi = sockets[id], pendingCloses[id] == nil, lws_partial_buffered(wsi) == 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: OutboundMessage.headroom + 2)
        let written = buffer.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return trackhub_lws_write_ping(wsi, base + OutboundMessage.headroom)
        }
        return written >= 0
    }

    /// Drops a connection at once, without a close handshake (a peer that stopped answering).
    public func drop(_ id: ConnectionID) {
        guard let wsi = sockets[id] else { return }
        trackhub_lws_kill_async(wsi)
    }

    /// A peek at the socket: its peer's end (or a reset) is there to read. A connection lws
    /// has already closed counts as closed.
    public func hasPeerClosed(_ id: ConnectionID) -> Bool {
        guard let wsi = sockets[id] else { return true }
        return trackhub_peer_closed(trackhub_lws_socket_fd(wsi)) != 0
    }

    /// Closes a WebSocket connection with a code, after whatever is being written now.
    public func close(_ id: ConnectionID, code: UInt16, reason: String) {
        guard let wsi = sockets[id] else { return }
        pendingCloses[id] = (code, reason)
        lws_callback_on_writable(wsi)
        // A reader that never reads never becomes writeable: do not wait for it forever.
        trackhub_lws_set_close_timeout(wsi, 3)
    }

    // MARK: - Callbacks (service thread)

    /// `LWS_CALLBACK_RECEIVE`: one fragment of a message; the whole text goes to the delegate.
    func receive(_ wsi: OpaquePointer, _ id: ConnectionID, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        if lws_frame_is_binary(wsi) != 0 {
            closes[id] = .hub(UInt16(LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE.rawValue))
            lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, nil, 0)
            return -1
        }
        var buffer = fragments[id] ?? []
        if buffer.count + length > options.maxMessageBytes {
            fragments[id] = nil
            let text = "message over \(options.maxMessageBytes) bytes"
            closes[id] = .hub(UInt16(LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE.rawValue))
            closeNow(wsi, code: LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, reason: text)
            return -1
        }
        if let input, length > 0 {
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
            fragments[id] = nil
            delegate?.connectionReceived(id, message: buffer)
        } else {
            fragments[id] = buffer
        }
        return 0
    }

    /// `LWS_CALLBACK_SERVER_WRITEABLE`: a pending close, else one message from the delegate
    /// (one `lws_write` per callback), re-armed while more wait.
    func writeWebSocket(_ wsi: OpaquePointer, _ id: ConnectionID) -> Int32 {
        if let close = pendingCloses[id] {
            closes[id] = .hub(close.code)
            closeNow(wsi, code: lws_close_status(rawValue: UInt32(close.code)), reason: close.reason)
            return -1
        }
        guard let next = delegate?.nextMessage(for: id) else { return 0 }
        let written = next.message.withPayloadPointer { payload, count in
            trackhub_lws_write_text(wsi, payload, count)
        }
        if written < 0 { return -1 }
        if next.hasMore { lws_callback_on_writable(wsi) }
        return 0
    }

    /// `LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`: the peer's close frame (lws echoes it when we
    /// return 0). 1005: it had no code.
    func peerClosed(_ id: ConnectionID, input: UnsafeMutableRawPointer?, length: Int) {
        guard closes[id] == nil else { return }
        let code = trackhub_close_code(input, length)
        closes[id] = .peer(code == 0 ? 1005 : code)
    }

    /// `LWS_CALLBACK_CLOSED`: the delegate hears who closed with which code.
    func webSocketClosed(_ id: ConnectionID) {
        let close = closes.removeValue(forKey: id) ?? .none
        forget(id)
        delegate?.connectionClosed(id, close: close)
    }

    /// Sets the close frame lws sends when the callback returns non-zero (reason cut to 120 bytes).
    func closeNow(_ wsi: OpaquePointer, code: lws_close_status, reason: String) {
        var bytes = Array(reason.utf8.prefix(120))
        bytes.withUnsafeMutableBufferPointer { buffer in
            lws_close_reason(wsi, code, buffer.baseAddress, buffer.count)
        }
    }
}
