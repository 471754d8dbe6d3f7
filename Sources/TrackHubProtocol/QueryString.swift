/// A URL query string (`a=1&b=x%20y`), percent-decoded (`+` is a space).
/// A repeated parameter: the last one wins. A parameter without `=` has the value "".
public struct QueryString: Sendable, Equatable {
    /// The parameters, decoded, in order (repeats included).
    public var items: [(name: String, value: String)]

    /// Parameters already decoded (the host parses the query of each request).
    public init(items: [(name: String, value: String)]) {
        self.items = items
    }

    /// The value of the last parameter called `name`, or nil.
    public subscript(name: String) -> String? {
        items.last(where: { $0.name == name })?.value
    }

    /// Parses `query`, with or without its leading `?`. A bad percent-escape or invalid
    /// UTF-8 is `bad_request` naming the parameter.
    public static func parse(_ query: Substring) throws(ProtocolError) -> QueryString {
        var query = query
        if query.first == "?" { query = query.dropFirst() }
        var items: [(name: String, value: String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let nameRaw: Substring
            let valueRaw: Substring
            if let equals = part.firstIndex(of: "=") {
                nameRaw = part[..<equals]
                valueRaw = part[part.index(after: equals)...]
            } else {
                nameRaw = part
                valueRaw = ""
            }
            guard let name = percentDecode(nameRaw) else {
                throw .badRequest("query parameter \(String(nameRaw.prefix(64))) is not valid percent-encoded UTF-8")
            }
            guard let value = percentDecode(valueRaw) else {
                throw .badRequest("query parameter \(name) is not valid percent-encoded UTF-8")
            }
            items.append((name, value))
        }
        return QueryString(items: items)
    }

    /// Parses `query`, with or without its leading `?`.
    public static func parse(_ query: String) throws(ProtocolError) -> QueryString {
        try parse(Substring(query))
    }

    /// Equal when the items are equal, in order.
    public static func == (lhs: QueryString, rhs: QueryString) -> Bool {
        lhs.items.count == rhs.items.count && zip(lhs.items, rhs.items).allSatisfy { $0 == $1 }
    }

    /// Decodes `%XX` escapes and `+`; nil on a bad escape or invalid UTF-8.
    public static func percentDecode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - 0x61 + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - 0x41 + 10
        default: return nil
        }
    }

    /// A query value as a JSON-grammar number (no `inf`, `nan` or hex); nil when it is not one.
    static func number(_ text: String) -> JSONNumber? {
        JSONParser.parseNumber(text)
    }

    /// A query value as an integer (JSON grammar, integral, fits Int64); nil when it is not one.
    static func integer(_ text: String) -> Int64? {
        guard let number = number(text), number.isInteger, number.isFinite else { return nil }
        return Int64(exactly: number.value)
    }
}
