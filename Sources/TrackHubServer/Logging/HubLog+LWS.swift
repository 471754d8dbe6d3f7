import Foundation
import TrackHubLWS
import TrackHubSync

/// The lws lines seen last (`RepeatedLines`), shared by every lws context of the process.
private let lwsRepeats = HubMutex(RepeatedLines())

extension LWSLogSink {
    /// libwebsockets' lines through `HubLog`: the hub's time stamp, format and redaction (lws
    /// may quote a URI or a header), tagged `source=lws`. NOTICE lines (the libev plugin logs
    /// every socket event there) only at `--log-level debug`, as debug lines; so are the
    /// lines of a start that failed (`LWSLogLevel.debug`), whose one-line error says it. A line
    /// repeated within a second is counted, not printed again (`RepeatedLines`).
    static let hubLog = LWSLogSink(
        wantsNotices: { HubLog.isEnabled(.debug) },
        emit: { level, text in
            let hubLevel: LogLevel
            switch level {
            case .error: hubLevel = .error
            case .warning: hubLevel = .warn
            case .notice, .debug: hubLevel = .debug
            }
            let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
            for line in lwsRepeats.withLock({ $0.admit(text, nowMs: nowMs) }) {
                HubLog.log(hubLevel, line, [("source", .string("lws"))])
            }
        })
}
