import CLibWebSockets
import TrackHubProtocol

/// WebSocket upgrades: the per-address limit and the delegate's decision before lws answers
/// 101, a refusal answered as an HTTP status (and logged like an HTTP answer), and the
/// connection id a accepted upgrade gets once it is established.
extension LWSServerHost {
    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`: 0 lets lws upgrade; 1 after a refusal was written.
    func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let request = makeUpgradeRequest(wsi)
        if isOnSecondListener(wsi) {
            // The second listener serves plain HTTP (the OsmAnd protocol) only.
            refuseUpgrade(wsi, request, .notFound("the OsmAnd port serves no WebSocket"))
            return 1
        }
        if !connectionsPerAddress.admit(wsi, peer: request.peerAddress) {
            refuseUpgrade(wsi, request, .rateLimited("too many connections from \(request.peerAddress)"))
            return 1
        }
        switch delegate?.upgradeRequested(request) ?? .refuse(ProtocolError(.unavailable, "the hub is stopping")) {
        case .accept:
            upgrades[wsi] = request
            return 0
        case .refuse(let error):
            refuseUpgrade(wsi, request, error)
            return 1
        }
    }

    /// `LWS_CALLBACK_ESTABLISHED`: the connection gets its id and the delegate hears of it.
    func establish(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer) {
        let id = assignID(user: user, wsi: wsi)
        watchInput(id, wsi)
        let request = upgrades.removeValue(forKey: wsi)
            ?? UpgradeRequest(path: "/v1/ws", query: [], origin: nil, host: nil, peerAddress: peerAddress(wsi))
        delegate?.connectionOpened(id, request: request)
    }

    /// A refused upgrade is an HTTP answer too (a 401 for a bad `?token=`): logged like one.
    func reportRefusedUpgrade(_ upgrade: UpgradeRequest, status: Int) {
        let request = HTTPRequest(
            connection: ConnectionID(raw: 0), method: .get, path: upgrade.path, query: upgrade.query,
            origin: upgrade.origin, host: upgrade.host, authorization: nil, peerAddress: upgrade.peerAddress, body: [])
        delegate?.httpCompleted(request: request, status: status, durationSeconds: 0)
    }

    /// A refused upgrade, answered as an HTTP/1.1 response written here, with the error as
    /// its JSON body, then logged like an HTTP answer. lws's own `lws_return_http_status`
    /// writes `HTTP/1.0` at this point of the handshake (the request's version is not parsed
    /// yet), and clients that read only HTTP/1.1 handshakes (Python's `websockets`) then
    /// report a broken server instead of the 401 (PROTOCOL 1). The answer is a few hundred
    /// bytes on a fresh socket, so one write takes it whole; lws closes the connection after.
    func refuseUpgrade(_ wsi: OpaquePointer, _ upgrade: UpgradeRequest, _ error: ProtocolError) {
        let request = HTTPRequest(
            connection: ConnectionID(raw: 0), method: .get, path: upgrade.path, query: upgrade.query,
            origin: upgrade.origin, host: upgrade.host, authorization: nil, peerAddress: upgrade.peerAddress, body: [])
        let extra = delegate?.responseHeaders(for: request) ?? []
        let bytes = HTTPStatusLine.closingResponse(status: error.httpStatus, headers: extra, body: HTTPBodies.error(error))
        let pre = OutboundMessage.headroom
        var buffer = [UInt8](repeating: 0, count: pre)
        buffer.append(contentsOf: bytes)
        _ = buffer.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return trackhub_lws_write_http(wsi, base + pre, bytes.count)
        }
        reportRefusedUpgrade(upgrade, status: error.httpStatus)
    }
}
