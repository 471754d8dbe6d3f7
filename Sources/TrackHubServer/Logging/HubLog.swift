import Foundation
import TrackHubSync

/// The process's one logger: every line the hub, the CLI and libwebsockets write to standard
/// error goes through here, with a time stamp, in the `--log-format`, redacted
/// (`LogRedaction`). Standard output is kept for what scripts read (`listening on`).
///
/// Thread safety: called from the service thread, signal watchers, store and cluster
/// threads, and lws's log callback. The settings and the write share one `Mutex`: a line is
/// encoded outside it, then written with a single `write(2)` while holding it, so lines from
/// different threads never interleave and a reconfiguration never tears a line.
///
/// Cost: the write is blocking (line-buffered, no queue). A reader of stderr that stops
/// reading (a full pipe) stalls the thread that logs, the service thread included, once the
/// pipe's buffer (64 KiB on Linux) is full; journald and `docker logs` read continuously.
/// docs/operations.md says so; `--log-level warn` removes the per-request lines.
public enum HubLog {
    private struct Settings {
        /// Until `configure` (tests, library use): warnings and errors, as text.
        var level: LogLevel = .warn
        var format: LogFormat = .text
        var secrets: [String] = []
    }

    private static let settings = HubMutex(Settings())

    /// Called once by `serve` before the hub starts; `secrets` are redacted literally wherever
    /// they would appear.
    public static func configure(level: LogLevel, format: LogFormat, secrets: [String] = []) {
        settings.withLock { $0 = Settings(level: level, format: format, secrets: secrets) }
    }

    /// Whether a line of this level would be written: callers skip building fields otherwise.
    public static func isEnabled(_ level: LogLevel) -> Bool {
        settings.withLock { level <= $0.level }
    }

    /// Writes one line. `always`: whatever the level (the open-mode warning).
    public static func log(_ level: LogLevel, _ message: String, _ fields: [(key: String, value: LogValue)] = [], always: Bool = false) {
        let (enabled, format, secrets) = settings.withLock { (always || level <= $0.level, $0.format, $0.secrets) }
        guard enabled else { return }
        let line = LogLine(timeMillis: systemWallClockMillis(), level: level, message: message, fields: fields)
        var bytes = Array(line.encoded(format, redact: { LogRedaction.redact($0, secrets: secrets) }).utf8)
        bytes.append(UInt8(ascii: "\n"))
        settings.withLock { _ in writeAll(bytes) }
    }

    /// Logs `message` at `error` (always written, whatever `--log-level`).
    public static func error(_ message: String) { log(.error, message) }
    /// Logs `message` at `warn`.
    public static func warn(_ message: String) { log(.warn, message) }
    /// Logs `message` at `info` (the default level).
    public static func info(_ message: String) { log(.info, message) }
    /// Logs `message` at `debug` (libwebsockets' own lines land here too).
    public static func debug(_ message: String) { log(.debug, message) }

    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard var base = raw.baseAddress else { return }
            var left = raw.count
            while left > 0 {
                let written = write(STDERR_FILENO, base, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // stderr closed or broken: the line is lost, the hub goes on
                }
                left -= written
                base += written
            }
        }
    }
}

/// One warning on standard error, for what an operator must see.
func logWarning(_ message: String) {
    HubLog.warn(message)
}
