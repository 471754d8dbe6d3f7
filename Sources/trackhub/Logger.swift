import TrackHubServer

/// The CLI's handle on the process logger (`HubLog`): the same lines, time stamps, format
/// and redaction as the hub's own. `HubLog.configure` (in `serve`) sets the level and format;
/// this only names the calls.
struct Logger: Sendable {
    func error(_ message: String) { HubLog.error(message) }
    func warn(_ message: String) { HubLog.warn(message) }
    func info(_ message: String) { HubLog.info(message) }
}
