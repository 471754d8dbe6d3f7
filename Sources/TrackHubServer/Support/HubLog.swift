import Foundation

/// One line on standard error, for what an operator must see (the CLI's logger is not
/// reachable from here).
func logWarning(_ message: String) {
    FileHandle.standardError.write(Data("trackhub warn: \(message)\n".utf8))
}
