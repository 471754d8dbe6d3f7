import CLibWebSockets

/// WebSocket upgrades: the per-address limit and the delegate's decision before lws answers
/// 101, a refusal answered as an HTTP status (and logged like an HTTP answer), and the
/// connection id a accepted upgrade gets once it is established.
extension LWSServerHost {
    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`: 0 lets lws upgrade; 1 after a refusal was written.
    func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let request = makeUpgradeRequest(wsi)
        if isOnSecondListener(wsi) {
            // The second listener serves plain HTTP (the OsmAnd protocol) only.
            refuseHTTP(wsi, status: 404)
            reportRefusedUpgrade(request, status: 404)
            return 1
        }
        if !connectionsPerAddress.admit(wsi, peer: request.peerAddress) {
            refuseHTTP(wsi, status: 429)
            reportRefusedUpgrade(request, status: 429)
            return 1
        }
        switch delegate?.upgradeRequested(request) ?? .refuse(status: 503) {
        case .accept:
            upgrades[wsi] = request
            return 0
        case .refuse(let status):
            refuseHTTP(wsi, status: status)
            reportRefusedUpgrade(request, status: status)
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

    /// lws's own status answer (no body of ours), for a refused upgrade.
    func refuseHTTP(_ wsi: OpaquePointer, status: Int) {
        _ = lws_return_http_status(wsi, UInt32(status), nil)
    }
}
