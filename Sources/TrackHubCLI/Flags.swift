import Foundation

/// A command-line error: printed as one line naming the flag, exit status 2.
public struct UsageError: Error, CustomStringConvertible {
    /// The whole line, without the command's name (the caller prefixes it).
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Reads `--flag value` / `--flag=value` pairs, with every flag also read from its
/// environment variable (`environmentPrefix` + the name in capitals, `_` for `-`; `TRACKHUB_`
/// for `trackhub`, `TRACKHUB_LOAD_` for `trackhub-load`) and, when `config` is a known flag,
/// from the YAML file it names (PROTOCOL 14). Flags win over the environment, which wins over
/// the file.
public struct Flags {
    /// Where a value came from, strongest first.
    public enum Source: Int, Comparable, Sendable {
        case flag, environment, file
        /// Stronger first: `flag < environment < file`.
        public static func < (a: Source, b: Source) -> Bool { a.rawValue < b.rawValue }
    }

    private var values: [String: String] = [:]
    private var sources: [String: Source] = [:]
    private var repeated: [String: [String]] = [:]
    /// Where a value set by the config file came from (`FILE line N`), for its errors.
    private var fileSources: [String: String] = [:]
    /// The valueless flags given on the command line (`--help`); switches are not read from the
    /// environment or the file.
    public private(set) var switches: Set<String> = []
    /// The flag names that take a value; any other `--name` is an error.
    public let known: Set<String>
    /// The flag names that take no value (default: `help`).
    public let knownSwitches: Set<String>

    /// Parses `arguments`, then fills unset flags from `environment` and, when `config` is known and
    /// set, from that file.
    /// - Throws: `UsageError` for an unknown flag, a missing value, a positional argument, or a bad
    ///   config file.
    public init(
        arguments: [String], known: Set<String>, switches knownSwitches: Set<String> = ["help"],
        environmentPrefix: String = "TRACKHUB_", environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        self.known = known
        self.knownSwitches = knownSwitches
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw UsageError("unexpected argument \(argument)") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownSwitches.contains(name) && value == nil {
                switches.insert(name)
                index += 1
                continue
            }
            guard known.contains(name) else { throw UsageError("unknown flag --\(name)") }
            if value == nil {
                guard index + 1 < arguments.count else { throw UsageError("--\(name) needs a value") }
                value = arguments[index + 1]
                index += 1
            }
            values[name] = value
            sources[name] = .flag
            repeated[name, default: []].append(value ?? "")
            index += 1
        }
        for name in known where values[name] == nil {
            let variable = environmentPrefix + name.uppercased().replacingOccurrences(of: "-", with: "_")
            if let fromEnvironment = environment[variable], !fromEnvironment.isEmpty {
                values[name] = fromEnvironment
                sources[name] = .environment
                repeated[name] = [fromEnvironment]
            }
        }
        if known.contains("config"), let path = values["config"] {
            try apply(ConfigFile.load(path: path))
        }
    }

    /// Fills what neither a flag nor the environment set. A list (a repeatable flag) is
    /// joined with commas, as its environment variable would be written.
    private mutating func apply(_ file: ConfigFile) throws(UsageError) {
        for entry in file.entries {
            guard known.contains(entry.key), entry.key != "config" else {
                throw UsageError("--config \(file.path): line \(entry.line): unknown key \(entry.key)")
            }
            guard values[entry.key] == nil, !entry.values.isEmpty else { continue }
            values[entry.key] = entry.values.joined(separator: ",")
            sources[entry.key] = .file
            repeated[entry.key] = entry.values
            fileSources[entry.key] = "\(file.path) line \(entry.line)"
        }
    }

    /// How an error names flag `name`: `--name`, plus the file and line when the value
    /// came from the config file.
    public func label(_ name: String) -> String {
        guard let source = fileSources[name] else { return "--\(name)" }
        return "--\(name) (\(source))"
    }

    /// The value of `name` as given (the last one of a repeated flag); nil: not set anywhere.
    public func string(_ name: String) -> String? { values[name] }

    /// Where `name`'s value came from; nil when it is not set.
    public func source(_ name: String) -> Source? { sources[name] }

    /// Every value of a repeatable flag, in command-line order; from the environment one value,
    /// from the file the list's items.
    public func all(_ name: String) -> [String] { repeated[name] ?? [] }

    /// The value of `name` as an integer; nil: not set.
    /// - Throws: `UsageError` naming the flag when it is not an integer within `range`.
    public func int(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(label(name)): \(text) is not an integer within \(range.lowerBound)–\(range.upperBound)")
        }
        return value
    }

    /// The value of `name` as a finite number; nil: not set.
    /// - Throws: `UsageError` naming the flag when it is not a number within `range`.
    public func double(_ name: String, range: ClosedRange<Double>) throws -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw UsageError("\(label(name)): \(text) is not a number within \(range.lowerBound)–\(range.upperBound)")
        }
        return value
    }

    /// A duration with a unit: `500ms`, `30s`, `10m`, `1h`, `2d` (PROTOCOL conventions).
    public func durationMs(_ name: String) throws -> Int64? {
        guard let text = values[name] else { return nil }
        guard let ms = Flags.parseDurationMs(text), ms >= 0 else {
            throw UsageError("\(label(name)): \(text) is not a duration (a number with a unit s, m, h or d, e.g. 30s)")
        }
        return ms
    }

    /// A byte size: `65536`, `64KiB`, `1MiB`.
    public func bytes(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text = values[name] else { return nil }
        let units: [(String, Int)] = [("KiB", 1024), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1000), ("MB", 1_000_000), ("B", 1), ("", 1)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let number = Int(text.dropLast(suffix.count)), range.contains(number * scale) { return number * scale }
        }
        throw UsageError("\(label(name)): \(text) is not a size within \(range.lowerBound)–\(range.upperBound) bytes (e.g. 65536 or 64KiB)")
    }

    /// Milliseconds of a duration with a unit (`ms`, `s`, `m`, `h`, `d`; fractions allowed, `1.5s`),
    /// rounded; nil for a bare number, another unit or a negative value.
    public static func parseDurationMs(_ text: String) -> Int64? {
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number.isFinite, number >= 0 else { return nil }
            return Int64((number * scale).rounded())
        }
        return nil
    }
}
