import CLibWebSockets

/// Whether any WebSocket peer's bytes wait unread in the kernel (`hasInputWaiting`), so the
/// hub can stop a sub-tick's writes part-way and let the loop read a courier's fix first
/// (Hub+Tick). lws has no such question: the host keeps its own epoll set of every
/// WebSocket's socket (level-triggered for input; lws's loop still does all the reading)
/// and asks it with a zero timeout, one system call that costs the same for 10 or 10 000
/// sockets. Bound: one entry per open WebSocket, removed when it closes.
extension LWSServerHost {
    /// True when a peer has sent bytes the loop has not read yet (service thread).
    public var hasInputWaiting: Bool {
        guard readinessSet >= 0, !readinessFDs.isEmpty else { return false }
        return trackhub_readiness_any(readinessSet) != 0
    }

    /// Creates the set (at `start`); without it `hasInputWaiting` stays false.
    func openReadinessSet() {
        if readinessSet < 0 { readinessSet = trackhub_readiness_create() }
    }

    /// An established WebSocket joins the set.
    func watchInput(_ id: ConnectionID, _ wsi: OpaquePointer) {
        let fd = trackhub_lws_socket_fd(wsi)
        guard readinessSet >= 0, fd >= 0, trackhub_readiness_add(readinessSet, fd) == 0 else { return }
        readinessFDs[id] = fd
    }

    /// A closed one leaves it (before lws closes the socket, whose number may be reused).
    func unwatchInput(_ id: ConnectionID) {
        guard let fd = readinessFDs.removeValue(forKey: id) else { return }
        trackhub_readiness_remove(readinessSet, fd)
    }
}
