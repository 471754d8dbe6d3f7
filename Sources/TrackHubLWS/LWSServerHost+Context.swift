import CLibWebSockets
import Foundation
import Synchronization

/// The lws context and its loop: the protocol table and creation options (the libev plugin,
/// no validity timers, IPv4/IPv6 binding, failing on an address that does not bind), running
/// the loop on the calling thread, and the cross-thread wake-up and stop.
extension LWSServerHost {
    /// Creates the context and binds the listening socket. Call on the thread that will run it.
    public func start() throws {
        LWSLog.route(options.logs)
        // What lws says while the context and vhosts are made is held: if one cannot bind,
        // lws logs three or four lines of its own, and the thrown error is the operator's one
        // line (PROTOCOL 14); theirs go to the debug log then.
        LWSLog.hold(for: options.logs)
        var started = false
        defer { LWSLog.release(started: started) }
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = lwsServerCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[0].rx_buffer_size = 4096
        // Hand whole messages (snapshots, segments with long paths) to the kernel in one send.
        protocols[0].tx_packet_size = 256 * 1024
        var info = lws_context_creation_info()
        info.port = Int32(options.port)
        info.iface = interfaceName.map { UnsafePointer($0) }
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        // Validity checks off: lws's own (even its default when no policy is given: ping after
        // 300 s) keep one timer per connection in a sorted list and re-insert it at the far
        // end on every PONG, a walk over every connection (12 % of the hub's time at 11 000
        // connections). The hub pings from its own sweep instead (Hub+Keepalive).
        info.retry_and_idle_policy = trackhub_no_validity_policy()
        info.timeout_secs = UInt32(Self.httpStallTimeoutSeconds)
        info.options = trackhub_opt_validate_utf8()
        if options.useLibev { info.options |= trackhub_opt_libev() }
        info.signal_cb = lwsSignalCallback
        // With IPv6 enabled, lws 4.1.6 binds the wildcard address and ignores an IPv4
        // `iface`: `--listen 127.0.0.1:…` would then be reachable from every interface. An
        // IPv6 address listens on IPv6 only. `host` is numeric here (ListenAddress resolved it).
        if options.host.contains(":") {
            if interfaceName != nil { info.options |= trackhub_opt_ipv6_only() }
        } else {
            info.options |= trackhub_opt_disable_ipv6()
        }
        // An address that is not this machine's is an error now (PROTOCOL 14), not a vhost
        // lws keeps retrying in the background while the process looks healthy.
        info.options |= trackhub_opt_fail_upon_unable_to_bind()
        applyTLS(to: &info)
        guard let context = lws_create_context(&info) else {
            throw ServerHostError.cannotListen(on: ListenAddress(host: options.host, port: options.port))
        }
        self.context = context
        openReadinessSet()
        if let vhost = lws_get_vhost_by_name(context, "default") {
            boundPort = Int(lws_get_vhost_listen_port(vhost))
        }
        if let secondHost = options.secondHost {
            try startSecondListener(context, host: secondHost)
        }
        started = true
    }

    /// The second listening address: a vhost of its own on the same context and loop.
    private func startSecondListener(_ context: OpaquePointer, host: String) throws {
        var info = lws_context_creation_info()
        info.port = Int32(options.secondPort)
        info.iface = secondInterfaceName.map { UnsafePointer($0) }
        info.protocols = UnsafePointer(protocols)
        info.vhost_name = UnsafePointer(secondVhostName)
        info.timeout_secs = UInt32(Self.httpStallTimeoutSeconds)
        info.retry_and_idle_policy = trackhub_no_validity_policy()
        info.options = trackhub_opt_validate_utf8()
        if host.contains(":") {
            if secondInterfaceName != nil { info.options |= trackhub_opt_ipv6_only() }
        } else {
            info.options |= trackhub_opt_disable_ipv6()
        }
        info.options |= trackhub_opt_fail_upon_unable_to_bind()
        applyTLS(to: &info)
        guard let vhost = lws_create_vhost(context, &info) else {
            // Asked before the context goes: with it, the first address goes too, and a second
            // address equal to the first would then bind and hide the cause.
            let error = ServerHostError.cannotListen(on: ListenAddress(host: host, port: options.secondPort))
            lws_context_destroy(context)
            self.context = nil
            throw error
        }
        secondVhost = vhost
        secondBoundPort = Int(lws_get_vhost_listen_port(vhost))
    }

    /// True when `wsi` came in on the second listener.
    func isOnSecondListener(_ wsi: OpaquePointer) -> Bool {
        guard let secondVhost else { return false }
        return lws_get_vhost(wsi) == secondVhost
    }

    /// Runs the event loop on the calling thread until `requestStop()` has been honoured.
    public func run() {
        guard let context else { return }
        while !destroyed {
            if lws_service(context, 0) < 0 { break }
            if !options.useLibev && isStopRequested && !destroyed {
                destroyContext()
            }
        }
        if !destroyed { destroyContext() }
    }

    /// Thread-safe: makes the loop call `serviceWoke()` soon.
    public func wake() {
        lifecycle.withLock { _ in
            if let context, !destroyed { lws_cancel_service(context) }
        }
    }

    /// Thread-safe: the loop will destroy the context and `run()` will return.
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// `LWS_CALLBACK_EVENT_WAIT_CANCELLED` (once per protocol per vhost for each `wake()`):
    /// the delegate drains its inbox; with the lws-owned libev loop, a requested stop is
    /// honoured here, once (`lws_service` returns only after the context is destroyed
    /// inside the loop).
    func serviceWasWoken() {
        delegate?.serviceWoke()
        if options.useLibev && isStopRequested && !destroyed {
            destroyContext()
        }
    }

    func destroyContext() {
        guard let context, !destroyed else { return }
        lifecycle.withLock { _ in destroyed = true }
        trackhub_timer_cancel(timer)
        lws_context_destroy(context)
    }
}
