import Foundation

/// A `--config FILE` (PROTOCOL 14): a flat YAML mapping of flag names, as written after
/// `--`, to scalars, or to a list of scalars for a repeatable flag. A key with no value
/// (`tick-hz:`, `~`, `null`) is not set, as an empty environment variable is not.
///
/// Values are kept as the text written (`10`, `30s`, `true`): the flag parsers judge them,
/// so a bad value in the file gets the same error as on the command line.
public struct ConfigFile: Sendable, Equatable {
    /// One key of the file with its value or values.
    public struct Entry: Sendable, Equatable {
        /// The flag name as written after `--` (`tick-hz`).
        public var key: String
        /// One value for a scalar, any number for a list; empty: not set.
        public var values: [String]
        /// The key's line in the file, 1-based, for error messages.
        public var line: Int
    }

    /// The file as named on the command line, for error messages.
    public let path: String
    /// The keys in file order.
    public let entries: [Entry]

    /// Keys whose null or empty value is an error rather than "not set": the secrets.
    public static let keysThatMustHaveAValue: Set<String> = ["jwt-secret", "jwt-secret-file"]

    /// Reads and parses `path`.
    /// - Throws: `UsageError` naming the file (and line) when it cannot be read or parsed.
    public static func load(path: String) throws(UsageError) -> ConfigFile {
        let bytes = try ReadableFile.bytes(path, label: "--config")
        guard let text = String(validating: bytes, as: UTF8.self) else { throw UsageError("--config: \(path) is not UTF-8 text") }
        return try parse(text, path: path)
    }

    /// Parses `text`; `path` only names the file in errors.
    public static func parse(_ text: String, path: String) throws(UsageError) -> ConfigFile {
        let events: [(event: YAMLEvent, line: Int)]
        do {
            events = try YAMLEvents.parse(text)
        } catch {
            throw UsageError("--config \(path): line \(error.line): \(error.problem)")
        }
        var reader = Reader(events: events, path: path)
        return ConfigFile(path: path, entries: try reader.document())
    }
}

/// Walks the event list: stream, at most one document, one mapping of scalar keys to a
/// scalar or a list of scalars.
private struct Reader {
    let events: [(event: YAMLEvent, line: Int)]
    let path: String
    var index = 0

    init(events: [(event: YAMLEvent, line: Int)], path: String) {
        self.events = events
        self.path = path
    }

    mutating func next() -> (event: YAMLEvent, line: Int) {
        defer { index = min(index + 1, events.count - 1) }
        return events[index]
    }

    func fail(_ line: Int, _ message: String) -> UsageError {
        UsageError("--config \(path): line \(line): \(message)")
    }

    mutating func document() throws(UsageError) -> [ConfigFile.Entry] {
        _ = next()  // stream start
        // A file of comments only holds no document (not even a start): nothing is set.
        if next().event == .streamEnd { return [] }
        let root = next()
        var entries: [ConfigFile.Entry] = []
        switch root.event {
        case .mappingStart:
            entries = try mapping()
        case .scalar(let value, let plain) where plain && Reader.isNull(value):
            break
        default:
            throw fail(root.line, "the file must be a mapping of flag names to values (tick-hz: 10)")
        }
        _ = next()  // document end
        let after = next()
        if after.event != .streamEnd { throw fail(after.line, "only one YAML document is read; remove the second") }
        return entries
    }

    mutating func mapping() throws(UsageError) -> [ConfigFile.Entry] {
        var entries: [ConfigFile.Entry] = []
        var seen: Set<String> = []
        while true {
            let (event, line) = next()
            switch event {
            case .mappingEnd:
                return entries
            case .scalar(let key, _):
                guard seen.insert(key).inserted else { throw fail(line, "\(key) is set twice") }
                let values = try value(of: key)
                if values.isEmpty && ConfigFile.keysThatMustHaveAValue.contains(key) {
                    throw fail(line, "\(key): null, ~ or an empty value is not a secret (remove the line to run an open hub on purpose)")
                }
                entries.append(ConfigFile.Entry(key: key, values: values, line: line))
            default:
                throw fail(line, "a key must be a flag name (tick-hz: 10)")
            }
        }
    }

    mutating func value(of key: String) throws(UsageError) -> [String] {
        let (event, line) = next()
        switch event {
        case .scalar(let value, let plain):
            return plain && Reader.isNull(value) ? [] : [value]
        case .sequenceStart:
            var values: [String] = []
            while true {
                let (item, itemLine) = next()
                switch item {
                case .sequenceEnd: return values
                case .scalar(let value, let plain) where !(plain && Reader.isNull(value)): values.append(value)
                default: throw fail(itemLine, "\(key): a list may hold only values")
                }
            }
        case .alias:
            throw fail(line, "\(key): aliases (*name) are not supported in a config file")
        default:
            throw fail(line, "\(key): expected a value or a list of values, not a mapping")
        }
    }

    /// YAML's plain nulls: an empty value, `~` and `null`.
    static func isNull(_ value: String) -> Bool {
        ["", "~", "null", "Null", "NULL"].contains(value)
    }
}
