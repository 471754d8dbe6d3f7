import CLibWebSockets

/// The callback dispatch: the one C function lws calls for every connection of the hub's
/// protocol, and the `switch` on the reason that hands each event to the extension doing
/// that job. Return values are lws's: 0 goes on, non-zero closes the connection.
extension LWSServerHost {
    func handle(
        wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
        input: UnsafeMutableRawPointer?, length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            serviceWasWoken()
            return 0

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            guard let wsi else { return -1 }
            return confirmUpgrade(wsi)

        case LWS_CALLBACK_ESTABLISHED:
            guard let wsi, let user else { return -1 }
            establish(wsi, user: user)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let wsi, let id = connectionID(user) else { return -1 }
            return receive(wsi, id, input: input, length: length)

        case LWS_CALLBACK_RECEIVE_PONG:
            if let id = connectionID(user) { delegate?.connectionAnsweredPing(id) }
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi, let id = connectionID(user) else { return -1 }
            return writeWebSocket(wsi, id)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let id = connectionID(user) { peerClosed(id, input: input, length: length) }
            return 0

        case LWS_CALLBACK_CLOSED:
            if let id = connectionID(user) { webSocketClosed(id) }
            return 0

        case LWS_CALLBACK_HTTP:
            guard let wsi, let user else { return -1 }
            return beginHTTP(wsi: wsi, user: user, uri: input, length: length)

        case LWS_CALLBACK_HTTP_BODY:
            guard let id = connectionID(user), let exchange = http[id] else { return -1 }
            receiveBody(id, exchange, input: input, length: length)
            return 0

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let id = connectionID(user), let exchange = http[id] else { return -1 }
            bodyCompleted(id, exchange)
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi, let id = connectionID(user) else { return -1 }
            return writeHTTP(wsi: wsi, id: id)

        case LWS_CALLBACK_WSI_DESTROY:
            if let wsi { connectionsPerAddress.release(wsi) }
            return 0

        case LWS_CALLBACK_CLOSED_HTTP:
            if let id = connectionID(user) { httpClosed(id) }
            return 0

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }
}

/// The single C entry point lws calls for every connection of the hub's protocol. It cannot
/// capture: the host is the context's user pointer.
func lwsServerCallback(
    wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
    input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else {
        return 0
    }
    let host = Unmanaged<LWSServerHost>.fromOpaque(raw).takeUnretainedValue()
    return host.handle(wsi: wsi, reason: reason, user: user, input: input, length: length)
}
