/// Open TCP connections by peer address, for `--max-conns-per-ip` (PROTOCOL 1: HTTP
/// connections count like WebSocket ones). A connection is counted when its first request
/// arrives and uncounted when lws destroys it (`LWS_CALLBACK_WSI_DESTROY`). A plain value:
/// `Connection` is the host's `wsi` pointer, used only as a key.
struct PerAddressConnections<Connection: Hashable> {
    /// Most connections from one address; 0: no limit.
    let limit: Int
    private var peerOfConnection: [Connection: String] = [:]
    private var countByAddress: [String: Int] = [:]

    init(limit: Int) { self.limit = limit }

    /// Counts a connection on its first request; false when its address is over the limit.
    mutating func admit(_ connection: Connection, peer: String) -> Bool {
        if peerOfConnection[connection] != nil { return true }  // a later request on a kept-alive connection
        if limit > 0 && countByAddress[peer, default: 0] >= limit {
            return false
        }
        peerOfConnection[connection] = peer
        countByAddress[peer, default: 0] += 1
        return true
    }

    /// Uncounts a connection lws destroyed; nothing when it was never counted.
    mutating func release(_ connection: Connection) {
        guard let peer = peerOfConnection.removeValue(forKey: connection) else { return }
        let remaining = (countByAddress[peer] ?? 1) - 1
        countByAddress[peer] = remaining > 0 ? remaining : nil
    }

    /// Open connections from one address.
    func count(from address: String) -> Int { countByAddress[address] ?? 0 }
}
