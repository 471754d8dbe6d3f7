import CLibWebSockets

/// libwebsockets' own log lines, routed through `HubLog`: with the hub's time stamp and
/// format, and redacted like every other line (lws may quote a URI or a header).
enum LWSLog {
    /// Installs the emitter and the levels (process-wide in lws). `verbose` adds NOTICE.
    static func route(verbose: Bool) {
        trackhub_lws_route_logs(lwsLogEmit, verbose ? 1 : 0)
    }

    static func level(_ lws: Int32) -> LogLevel {
        if lws & trackhub_lll_err() != 0 { return .error }
        if lws & trackhub_lll_warn() != 0 { return .warn }
        // NOTICE is on only at --log-level debug (the libev plugin logs every socket event there).
        return .debug
    }
}

/// The C function pointer lws calls with each line (on whichever thread logs: the service
/// thread, or the thread creating the context). `HubLog` is safe from any thread.
private func lwsLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    var text = String(cString: line)
    while let last = text.last, last.isNewline || last == " " { text.removeLast() }
    guard !text.isEmpty else { return }
    HubLog.log(LWSLog.level(level), text, [("source", .string("lws"))])
}
