import TrackHubLWS

extension LWSLogSink {
    /// libwebsockets' lines through `HubLog`: the hub's time stamp, format and redaction (lws
    /// may quote a URI or a header), tagged `source=lws`. NOTICE lines (the libev plugin logs
    /// every socket event there) only at `--log-level debug`, as debug lines; so are the
    /// lines of a start that failed (`LWSLogLevel.debug`), whose one-line error says it.
    static let hubLog = LWSLogSink(
        wantsNotices: { HubLog.isEnabled(.debug) },
        emit: { level, text in
            let hubLevel: LogLevel
            switch level {
            case .error: hubLevel = .error
            case .warning: hubLevel = .warn
            case .notice, .debug: hubLevel = .debug
            }
            HubLog.log(hubLevel, text, [("source", .string("lws"))])
        })
}
