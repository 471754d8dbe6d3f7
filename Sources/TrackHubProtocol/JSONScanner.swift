/// The recursive-descent scanner behind `JSONParser`, over a buffer that outlives it.
struct JSONScanner {
    private let buffer: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private(set) var position = 0
    private var scratch: [UInt8] = []

    init(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.buffer = buffer
        self.maxDepth = maxDepth
    }

    // MARK: errors

    private func failure(_ what: String, at offset: Int) -> ProtocolError {
        ProtocolError(.badRequest, "invalid JSON at byte \(offset): \(what)", byteOffset: offset)
    }

    private func describeByte(at offset: Int) -> String {
        guard offset < buffer.count else { return "end of input" }
        let byte = buffer[offset]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
    }

    private func unexpected(_ expected: String) -> ProtocolError {
        failure("expected \(expected), found \(describeByte(at: position))", at: position)
    }

    // MARK: structure

    mutating func parseDocument() throws(ProtocolError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard position == buffer.count else {
            throw failure("unexpected \(describeByte(at: position)) after the JSON value", at: position)
        }
        return value
    }

    private mutating func skipWhitespace() {
        while position < buffer.count {
            switch buffer[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(ProtocolError) -> JSONValue {
        guard position < buffer.count else { throw unexpected("a value") }
        switch buffer[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw unexpected("a value")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(ProtocolError) {
        let start = position
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected -> Bool in
            guard start + count <= buffer.count else { return false }
            for offset in 0..<count where buffer[start + offset] != expected[offset] { return false }
            return true
        }
        guard matches else { throw failure("invalid literal (expected \(literal))", at: start) }
        position += count
    }

    private func checkDepth(_ depth: Int) throws(ProtocolError) {
        if depth > maxDepth {
            throw ProtocolError(.badRequest, "JSON nesting deeper than \(maxDepth) levels", byteOffset: position)
        }
    }

    private mutating func parseObject(depth: Int) throws(ProtocolError) -> JSONValue {
        try checkDepth(depth)
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if position < buffer.count, buffer[position] == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else {
                throw unexpected("a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < buffer.count, buffer[position] == UInt8(ascii: ":") else {
                throw unexpected("':' after an object key")
            }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            object[key] = value
            skipWhitespace()
            guard position < buffer.count else { throw unexpected("',' or '}'") }
            if buffer[position] == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
                continue
            }
            if buffer[position] == UInt8(ascii: "}") {
                position += 1
                return .object(object)
            }
            throw unexpected("',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(ProtocolError) -> JSONValue {
        try checkDepth(depth)
        position += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if position < buffer.count, buffer[position] == UInt8(ascii: "]") {
            position += 1
            return .array(array)
        }
        while true {
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard position < buffer.count else { throw unexpected("',' or ']'") }
            if buffer[position] == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
                continue
            }
            if buffer[position] == UInt8(ascii: "]") {
                position += 1
                return .array(array)
            }
            throw unexpected("',' or ']'")
        }
    }

    // MARK: strings

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(ProtocolError) -> String {
        position += 1
        let start = position
        // Fast path: no escapes.
        while position < buffer.count {
            let byte = buffer[position]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<position]), as: UTF8.self)
                position += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in a string (must be escaped)", at: position) }
            if byte < 0x80 {
                position += 1
            } else {
                position += try utf8SequenceLength(at: position)
            }
        }
        guard position < buffer.count else { throw failure("unterminated string", at: start - 1) }
        // Slow path: copy into scratch, decoding escapes.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<position]))
        while position < buffer.count {
            let byte = buffer[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                try parseEscape()
            } else if byte < 0x20 {
                throw failure("control character in a string (must be escaped)", at: position)
            } else if byte < 0x80 {
                scratch.append(byte)
                position += 1
            } else {
                let length = try utf8SequenceLength(at: position)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[position..<(position + length)]))
                position += length
            }
        }
        throw failure("unterminated string", at: start - 1)
    }

    private mutating func parseEscape() throws(ProtocolError) {
        let escapeStart = position
        position += 1
        guard position < buffer.count else { throw failure("unterminated string", at: escapeStart) }
        let byte = buffer[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4(escapeStart: escapeStart)
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard position + 1 < buffer.count,
                    buffer[position] == UInt8(ascii: "\\"), buffer[position + 1] == UInt8(ascii: "u")
                else { throw failure("unpaired surrogate in \\u escape", at: escapeStart) }
                let lowStart = position
                position += 2
                let low = try parseHex4(escapeStart: lowStart)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw failure("unpaired surrogate in \\u escape", at: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw failure("unpaired surrogate in \\u escape", at: escapeStart)
            }
            appendUTF8(scalar)
        default:
            throw failure("invalid escape \\\(describeByte(at: position - 1))", at: escapeStart)
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(ProtocolError) -> UInt32 {
        guard position + 4 <= buffer.count else { throw failure("incomplete \\u escape", at: escapeStart) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = buffer[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 0x61 + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 0x41 + 10)
            default: throw failure("invalid hex digit in \\u escape", at: position)
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// The length of the valid UTF-8 sequence starting at `offset` (a byte ≥ 0x80), per Unicode table 3-7.
    private func utf8SequenceLength(at offset: Int) throws(ProtocolError) -> Int {
        let lead = buffer[offset]
        let length: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: throw failure("invalid UTF-8", at: offset)
        }
        guard offset + length <= buffer.count else { throw failure("invalid UTF-8 (truncated sequence)", at: offset) }
        let second = buffer[offset + 1]
        guard second >= secondLow && second <= secondHigh else { throw failure("invalid UTF-8", at: offset) }
        var next = offset + 2
        while next < offset + length {
            guard buffer[next] & 0xC0 == 0x80 else { throw failure("invalid UTF-8", at: offset) }
            next += 1
        }
        return length
    }

    // MARK: numbers

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    private func isDigit(_ offset: Int) -> Bool {
        offset < buffer.count && buffer[offset] >= 0x30 && buffer[offset] <= 0x39
    }

    /// Parses a number literal at `position` (RFC 8259 grammar).
    mutating func parseNumber() throws(ProtocolError) -> JSONNumber {
        let start = position
        var negative = false
        if buffer[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard isDigit(position) else { throw failure("expected a digit in a number", at: position) }
        var mantissa: UInt64 = 0
        var mantissaDigits = 0
        var inexact = false  // a nonzero digit did not fit in the mantissa
        var droppedDigits = 0  // digits not in the mantissa (zeros or not)
        var trailingZeros = 0
        var allZero = true
        var fractionDigits = 0

        func take(_ digit: UInt8) {
            if digit == 0 { trailingZeros += 1 } else { trailingZeros = 0; allZero = false }
            if mantissa == 0 && digit == 0 { return }
            if mantissaDigits < 19 {
                mantissa = mantissa &* 10 &+ UInt64(digit)
                mantissaDigits += 1
            } else {
                droppedDigits += 1
                if digit != 0 { inexact = true }
            }
        }

        if buffer[position] == UInt8(ascii: "0") {
            take(0)
            position += 1
            if isDigit(position) { throw failure("leading zeros are not allowed in a number", at: start) }
        } else {
            while isDigit(position) {
                take(buffer[position] - 0x30)
                position += 1
            }
        }
        var isPlainInteger = true
        if position < buffer.count, buffer[position] == UInt8(ascii: ".") {
            isPlainInteger = false
            position += 1
            guard isDigit(position) else { throw failure("expected a digit after the decimal point", at: position) }
            while isDigit(position) {
                take(buffer[position] - 0x30)
                fractionDigits += 1
                position += 1
            }
        }
        var exponent = 0
        if position < buffer.count, buffer[position] == UInt8(ascii: "e") || buffer[position] == UInt8(ascii: "E") {
            isPlainInteger = false
            position += 1
            var exponentNegative = false
            if position < buffer.count, buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-") {
                exponentNegative = buffer[position] == UInt8(ascii: "-")
                position += 1
            }
            guard isDigit(position) else { throw failure("expected a digit in the exponent", at: position) }
            while isDigit(position) {
                if exponent < 100_000_000 { exponent = exponent * 10 + Int(buffer[position] - 0x30) }
                position += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        let length = position - start
        let isInteger = allZero || exponent - fractionDigits + trailingZeros >= 0
        // Value: exact fast path (Clinger) when the mantissa fits in 53 bits and 10^|e| is exact.
        let scale = exponent - fractionDigits + droppedDigits
        var value: Double
        if !inexact && mantissa <= (1 << 53) && scale >= -22 && scale <= 22 {
            value = Double(mantissa)
            if scale >= 0 { value *= Self.powersOfTen[scale] } else { value /= Self.powersOfTen[-scale] }
            if negative { value = -value }
        } else if isPlainInteger && !inexact && droppedDigits == 0 {
            // Up to 19 digits: UInt64 → Double conversion rounds correctly.
            value = Double(mantissa)
            if negative { value = -value }
        } else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<position]), as: UTF8.self)
            guard let parsed = Double(text) else { throw failure("invalid number", at: start) }
            value = parsed
        }
        return JSONNumber(value: value, isInteger: isInteger, start: start, length: length)
    }
}
