import Foundation
import TrackHubCore
import TrackHubProtocol

/// How much is logged: a line is written when its level is at or below the configured one.
public enum LogLevel: Int, Sendable, Comparable {
    case error = 0, warn, info, debug

    /// The level named as `--log-level` writes it (`error`, `warn`, `info`, `debug`); nil for another name.
    public init?(name: String) {
        switch name {
        case "error": self = .error
        case "warn": self = .warn
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    /// The level's name as it appears in a log line and in `--log-level`.
    public var name: String {
        switch self {
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// More severe first: `error` < `warn` < `info` < `debug`.
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// `--log-format`: `text` for people, `json` (one object per line) for log collectors.
public enum LogFormat: String, Sendable {
    case text, json
}

/// A value of a log line's field. Durations are `seconds` (written with microseconds, never
/// in exponent form, so a text line reads `duration_s=0.000412`).
public enum LogValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case seconds(Double)
}

/// One event, as the logger writes it: PROTOCOL 14's `time`, `level` and `msg`, then the
/// event's own fields in order. Pure: the tests encode lines without a clock or a stream.
public struct LogLine: Sendable {
    /// When it happened, in ms since the epoch (written as ISO 8601 UTC).
    public var timeMillis: Int64
    /// How severe it is.
    public var level: LogLevel
    /// What happened, in a few words (`http request`, `websocket closed`).
    public var message: String
    /// The event's own facts, in the order they are written.
    public var fields: [(key: String, value: LogValue)]

    /// One event to encode.
    public init(timeMillis: Int64, level: LogLevel, message: String, fields: [(key: String, value: LogValue)] = []) {
        self.timeMillis = timeMillis
        self.level = level
        self.message = message
        self.fields = fields
    }

    /// The line without its newline. Every string (the message, every string field) has been
    /// through `redact` first: no format can leak what the redaction removes.
    public func encoded(_ format: LogFormat, redact: (String) -> String = LogRedaction.redact) -> String {
        let time = Self.timestamp(timeMillis)
        switch format {
        case .json:
            var w = JSONWriter(headroom: 0, capacity: 160)
            w.beginObject()
            w.field("time", time)
            w.field("level", level.name)
            w.field("msg", redact(message))
            for (key, value) in fields {
                w.key(key)
                switch value {
                case .string(let text): w.string(redact(text))
                case .int(let number): w.int(number)
                case .seconds(let seconds): w.raw(Self.decimal(seconds))
                }
            }
            w.endObject()
            return String(decoding: w.finish(), as: UTF8.self)
        case .text:
            // `<time> <level> <msg> key=value ...`: the time first, so `sort` and `grep ^2025`
            // work; a value with a space or a quote is quoted, logfmt style.
            var out = "\(time) \(level.name) \(Self.oneLine(redact(message)))"
            for (key, value) in fields {
                out += " \(key)="
                switch value {
                case .string(let text): out += Self.textValue(redact(text))
                case .int(let number): out += String(number)
                case .seconds(let seconds): out += Self.decimal(seconds)
                }
            }
            return out
        }
    }

    /// ISO 8601 in UTC with milliseconds: `2025-06-01T10:00:00.123Z`.
    public static func timestamp(_ millis: Int64) -> String {
        var seconds = time_t(millis.floorDiv(1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let ms = Int32(millis - millis.floorDiv(1000) * 1000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(ms, 3))Z"
    }

    /// Seconds with six decimals, as a JSON number and a text value alike.
    static func decimal(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "0" }
        let micros = Int64((abs(seconds) * 1_000_000).rounded())
        let fraction = String(micros % 1_000_000)
        return (seconds < 0 && micros > 0 ? "-" : "") + "\(micros / 1_000_000)."
            + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// A message on one line: a newline inside one would make a second, unparseable line;
    /// other control characters are written escaped (`\x1b`), never raw, so a peer's bytes
    /// cannot move a terminal's cursor or colour what follows (PROTOCOL 14).
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" || scalar == "\u{2028}" || scalar == "\u{2029}" || scalar == "\u{85}" {
                out += " "
            } else if isControl(scalar) {
                out += escaped(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func textValue(_ text: String) -> String {
        let needsQuotes = text.isEmpty || text.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || isControl($0) }
        guard needsQuotes else { return text }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where isControl(scalar): out += escaped(scalar)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value <= 0x9F) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// `\t`, `\r`, or `\xNN` (`\u2028` above 0xFF): readable, and never the raw byte.
    static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\t": return "\\t"
        case "\r": return "\\r"
        default:
            let hex = String(scalar.value, radix: 16)
            return scalar.value <= 0xFF
                ? "\\x" + (hex.count < 2 ? "0" : "") + hex
                : "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }
}

private extension Int64 {
    func floorDiv(_ divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
