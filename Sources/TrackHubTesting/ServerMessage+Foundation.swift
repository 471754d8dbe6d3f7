import Foundation
import TrackHubProtocol

extension ServerMessage {
    /// The message as the Foundation objects the Swift tests read: `[String: Any]` of `String`,
    /// `NSNumber`, `NSNull`, `[Any]` and nested dictionaries; nil when it is not a valid JSON
    /// object. Decoded by TrackHubProtocol's strict parse (`object()`), the one decoder of
    /// server messages, and shaped as `JSONSerialization` shapes them, so a test's casts
    /// read as they always did: a number written without a fraction or an exponent is an
    /// integer `NSNumber` (`as? Int` and `as? Double` both read it), any other a `Double` one;
    /// `true` and `false` are boolean `NSNumber`s.
    public func foundationObject() -> [String: Any]? {
        guard let object = try? object() else { return nil }
        return foundation(object)
    }

    private func foundation(_ object: JSONObject) -> [String: Any] {
        var dictionary: [String: Any] = Dictionary(minimumCapacity: object.count)
        for (key, value) in object { dictionary[key] = foundation(value) }
        return dictionary
    }

    private func foundation(_ value: JSONValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let bool): return NSNumber(value: bool)
        case .string(let string): return string
        case .array(let array): return array.map { foundation($0) }
        case .object(let object): return foundation(object)
        case .number(let number):
            if isPlainIntegerLiteral(number), let integer = number.int64Value { return NSNumber(value: integer) }
            return NSNumber(value: number.value)
        }
    }

    /// Whether the number's literal in `bytes` has no fraction and no exponent (`12`, not
    /// `12.0` or `1e3`), as `JSONSerialization` tells integers from doubles.
    private func isPlainIntegerLiteral(_ number: JSONNumber) -> Bool {
        guard number.isInteger else { return false }
        guard let range = number.sourceRange, range.upperBound <= bytes.count else { return true }
        return !bytes[range].contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }
}
