import CLibWebSockets
import Synchronization

/// Where libwebsockets' own log lines go (process-wide in lws): the server host installs its
/// `ServerHostOptions.logs` when it starts. The hub routes them through its logger.
public struct LWSLogSink: Sendable {
    /// Whether lws's NOTICE lines are wanted; asked once, when a server host starts.
    public var wantsNotices: @Sendable () -> Bool
    /// Writes one line, without its trailing newline. Called on whichever thread lws logs
    /// from (the service thread, or the thread creating the context).
    public var emit: @Sendable (LWSLogLevel, String) -> Void

    /// A sink; see the properties.
    public init(wantsNotices: @escaping @Sendable () -> Bool, emit: @escaping @Sendable (LWSLogLevel, String) -> Void) {
        self.wantsNotices = wantsNotices
        self.emit = emit
    }
}

/// The level of one lws log line.
public enum LWSLogLevel: Sendable {
    case error
    case warning
    /// NOTICE (the Debian libev plugin logs every watcher change here).
    case notice
}

/// Installs the sink as lws's emitter, with the levels it wants.
enum LWSLog {
    private static let sink = Mutex<LWSLogSink?>(nil)

    /// Installs `sink` and the levels (errors and warnings; NOTICE too when it wants them).
    static func route(_ sink: LWSLogSink) {
        self.sink.withLock { $0 = sink }
        trackhub_lws_route_logs(lwsLogEmit, sink.wantsNotices() ? 1 : 0)
    }

    static func level(_ lws: Int32) -> LWSLogLevel {
        if lws & trackhub_lll_err() != 0 { return .error }
        if lws & trackhub_lll_warn() != 0 { return .warning }
        return .notice
    }

    fileprivate static func emit(_ level: LWSLogLevel, _ text: String) {
        let current = sink.withLock { $0 }
        current?.emit(level, text)
    }
}

/// The C function pointer lws calls with each line (on whichever thread logs: the service
/// thread, or the thread creating the context).
private func lwsLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    var text = String(cString: line)
    while let last = text.last, last.isNewline || last == " " { text.removeLast() }
    guard !text.isEmpty else { return }
    LWSLog.emit(LWSLog.level(level), text)
}
