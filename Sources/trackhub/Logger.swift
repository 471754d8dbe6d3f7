import Foundation

/// One-line logs on stderr with a level; stdout is kept for what scripts read.
struct Logger: Sendable {
    enum Level: Int, Sendable { case error = 0, warn, info, debug }
    let level: Level

    init(level: String) {
        switch level {
        case "error": self.level = .error
        case "warn": self.level = .warn
        case "debug": self.level = .debug
        default: self.level = .info
        }
    }

    func error(_ message: String) { write(.error, "error", message) }
    func warn(_ message: String) { write(.warn, "warn", message) }
    func info(_ message: String) { write(.info, "info", message) }

    private func write(_ at: Level, _ tag: String, _ message: String) {
        guard at.rawValue <= level.rawValue else { return }
        FileHandle.standardError.write(Data("trackhub \(tag): \(message)\n".utf8))
    }
}
