/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict: no comments, trailing commas, leading zeros, BOM, `NaN`/`Infinity`, unescaped
/// control characters or invalid UTF-8 (overlong forms, surrogates, above U+10FFFF) and no
/// unpaired `\u` surrogates. Duplicate keys: the last one wins. Numbers too large to be
/// finite (`1e400`) parse to an infinite `JSONNumber.value`, for the caller to reject.
/// Every error is a `ProtocolError` `bad_request` with the byte offset in its message and
/// in `byteOffset`; nesting past `maxDepth` is "JSON nesting deeper than N levels".
public struct JSONParser: Sendable {
    /// The deepest nesting accepted: the number of arrays and objects enclosing a value, the
    /// outermost included (`[[1]]` is 2 levels).
    public var maxDepth: Int

    /// A parser accepting up to `maxDepth` levels of nesting (default 32).
    public init(maxDepth: Int = 32) {
        self.maxDepth = max(0, maxDepth)
    }

    /// Parses one JSON text (a value with optional whitespace around it).
    public func parse(_ bytes: [UInt8]) throws(ProtocolError) -> JSONValue {
        let result: Result<JSONValue, ProtocolError> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, maxDepth: maxDepth)
            return Result { () throws(ProtocolError) -> JSONValue in try scanner.parseDocument() }
        }
        return try result.get()
    }

    /// Parses one JSON text from a slice of bytes; offsets in errors count from the slice's start.
    public func parse(_ bytes: ArraySlice<UInt8>) throws(ProtocolError) -> JSONValue {
        let result: Result<JSONValue, ProtocolError> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, maxDepth: maxDepth)
            return Result { () throws(ProtocolError) -> JSONValue in try scanner.parseDocument() }
        }
        return try result.get()
    }

    /// Parses one JSON text from raw memory (e.g. a libwebsockets receive buffer).
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(ProtocolError) -> JSONValue {
        var scanner = JSONScanner(bytes.assumingMemoryBound(to: UInt8.self), maxDepth: maxDepth)
        return try scanner.parseDocument()
    }

    /// Parses one JSON text from a string.
    public func parse(_ text: String) throws(ProtocolError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses `bytes` as exactly one JSON number literal (no whitespace); nil when it is not one.
    public static func parseNumber(_ bytes: some Collection<UInt8>) -> JSONNumber? {
        let array = Array(bytes)
        guard let first = array.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else {
            return nil
        }
        return array.withUnsafeBufferPointer { buffer -> JSONNumber? in
            var scanner = JSONScanner(buffer, maxDepth: 0)
            guard let number = try? scanner.parseNumber(), scanner.position == buffer.count else { return nil }
            return number
        }
    }

    /// Parses `text` as exactly one JSON number literal (no whitespace); nil when it is not one.
    public static func parseNumber(_ text: String) -> JSONNumber? {
        parseNumber(Array(text.utf8))
    }
}
