import CLibWebSockets
import Foundation
import TrackHubSync

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
public enum LWSLogLevel: Sendable, Equatable {
    case error
    case warning
    /// NOTICE (the Debian libev plugin logs every watcher change here).
    case notice
    /// An error or warning lws logged while a host failed to start: the host throws one
    /// error that names the address and the cause (PROTOCOL 14: one line, exit 2), so lws's
    /// own account of it (three or four lines for a port in use) is detail for `--log-level debug`.
    case debug
}

/// Installs the sink as lws's emitter, with the levels it wants, and holds back the lines
/// logged while a host starts.
enum LWSLog {
    private struct Held {
        var sink: LWSLogSink
        var lines: [(LWSLogLevel, String)] = []
    }

    private struct State {
        var sink: LWSLogSink?
        /// Lines being held, by the thread that is starting a host. Keyed by thread because
        /// lws logs what goes wrong in `lws_create_context` on the thread that calls it, while
        /// other hosts in the process (tests run several) keep logging on their own threads,
        /// whose lines must not be held or demoted with this one's.
        var held: [pthread_t: Held] = [:]
    }

    private static let state = HubMutex<State>(State())

    /// Installs `sink` and the levels (errors and warnings; NOTICE too when it wants them).
    static func route(_ sink: LWSLogSink) {
        state.withLock { $0.sink = sink }
        trackhub_lws_route_logs(lwsLogEmit, sink.wantsNotices() ? 1 : 0)
    }

    /// From now until `release`, the lines lws logs on the calling thread are kept, not
    /// written: whether they are the hub's business depends on how the start ends.
    static func hold(for sink: LWSLogSink) {
        let thread = pthread_self()
        state.withLock { $0.held[thread] = Held(sink: sink) }
    }

    /// Ends the calling thread's hold. Started: the lines go to the sink held with, at their
    /// levels (a warning about the TLS files still reaches the operator). Failed: at
    /// `.debug`, because the caller throws the one-line error that says what went wrong.
    static func release(started: Bool) {
        let thread = pthread_self()
        guard let held = state.withLock({ $0.held.removeValue(forKey: thread) }) else { return }
        for (level, text) in held.lines {
            held.sink.emit(started ? level : .debug, text)
        }
    }

    static func level(_ lws: Int32) -> LWSLogLevel {
        if lws & trackhub_lll_err() != 0 { return .error }
        if lws & trackhub_lll_warn() != 0 { return .warning }
        return .notice
    }

    /// One line from lws: held when this thread is starting a host, else to the sink.
    static func emit(_ level: LWSLogLevel, _ text: String) {
        let thread = pthread_self()
        let current: LWSLogSink? = state.withLock { state in
            if state.held[thread] != nil {
                state.held[thread]?.lines.append((level, text))
                return nil
            }
            return state.sink
        }
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
