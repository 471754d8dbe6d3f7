import Foundation

/// A small ordered JSON value for the summary line (keys stay in the order written).
indirect enum SummaryJSON: Sendable {
    case int(Int)
    case number(Double)
    case string(String)
    case bool(Bool)
    case null
    case array([SummaryJSON])
    case object([(String, SummaryJSON)])

    static func ms(_ value: Double?) -> SummaryJSON {
        guard let value else { return .null }
        return .number((value * 100).rounded() / 100)
    }

    var text: String {
        switch self {
        case .int(let v): return String(v)
        case .number(let v): return v.isFinite ? (v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)) : "null"
        case .string(let s):
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                default:
                    if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
                }
            }
            return out + "\""
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let fields): return "{" + fields.map { SummaryJSON.string($0.0).text + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}
