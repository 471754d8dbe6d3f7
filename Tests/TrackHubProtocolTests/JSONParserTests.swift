import Testing
@testable import TrackHubProtocol

struct ParseCase: Sendable, CustomTestStringConvertible {
    let rule: String
    let input: [UInt8]
    let outcome: Outcome
    var testDescription: String { rule }

    init(_ rule: String, _ input: String, _ outcome: Outcome) {
        self.rule = rule
        self.input = Array(input.utf8)
        self.outcome = outcome
    }

    init(_ rule: String, bytes: [UInt8], _ outcome: Outcome) {
        self.rule = rule
        self.input = bytes
        self.outcome = outcome
    }
}

@Suite struct JSONParserTests {
    static let syntaxCases: [ParseCase] = [
        ParseCase("empty input is invalid JSON", "", .error(.badRequest, "invalid JSON at byte 0")),
        ParseCase("whitespace only is invalid JSON", "  \n", .error(.badRequest, "at byte 3")),
        ParseCase("truncated object is invalid JSON", "{\"a\":1", .error(.badRequest, "at byte 6")),
        ParseCase("trailing comma in object is invalid JSON", "{\"a\":1,}", .error(.badRequest, "at byte 7")),
        ParseCase("trailing comma in array is invalid JSON", "[1,]", .error(.badRequest, "at byte 3")),
        ParseCase("single quotes are invalid JSON", "{'a':1}", .error(.badRequest, "at byte 1")),
        ParseCase("unquoted key is invalid JSON", "{a:1}", .error(.badRequest, "string key")),
        ParseCase("missing colon is invalid JSON", "{\"a\" 1}", .error(.badRequest, "':'")),
        ParseCase("leading zero is invalid JSON", "01", .error(.badRequest, "leading zeros")),
        ParseCase("bare minus is invalid JSON", "-", .error(.badRequest, "digit")),
        ParseCase("fraction without digits is invalid JSON", "1.", .error(.badRequest, "decimal point")),
        ParseCase("exponent without digits is invalid JSON", "1e+", .error(.badRequest, "exponent")),
        ParseCase("plus sign is invalid JSON", "+1", .error(.badRequest, "at byte 0")),
        ParseCase("NaN literal is invalid JSON", "NaN", .error(.badRequest, "at byte 0")),
        ParseCase("Infinity literal is invalid JSON", "[Infinity]", .error(.badRequest, "at byte 1")),
        ParseCase("misspelt literal is invalid JSON", "tru", .error(.badRequest, "invalid literal")),
        ParseCase("data after the value is invalid JSON", "{} {}", .error(.badRequest, "after the JSON value")),
        ParseCase("comment is invalid JSON", "{} // x", .error(.badRequest, "at byte 3")),
        ParseCase("unterminated string is invalid JSON", "\"abc", .error(.badRequest, "unterminated string")),
        ParseCase("raw newline in string is invalid JSON", "\"a\nb\"", .error(.badRequest, "control character")),
        ParseCase("raw tab in string is invalid JSON", "\"a\tb\"", .error(.badRequest, "control character")),
        ParseCase("unknown escape is invalid JSON", "\"\\x\"", .error(.badRequest, "invalid escape")),
        ParseCase("short unicode escape is invalid JSON", "\"\\u12\"", .error(.badRequest, "\\u")),
        ParseCase("lone high surrogate is invalid JSON", "\"\\uD83D\"", .error(.badRequest, "unpaired surrogate")),
        ParseCase("lone low surrogate is invalid JSON", "\"\\uDE00\"", .error(.badRequest, "unpaired surrogate")),
        ParseCase("high surrogate followed by non-surrogate is invalid JSON", "\"\\uD83D\\u0041\"", .error(.badRequest, "unpaired surrogate")),
        ParseCase("byte order mark is invalid JSON", bytes: [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], .error(.badRequest, "at byte 0")),
        ParseCase("invalid UTF-8 lone continuation byte", bytes: Array("\"a".utf8) + [0x80, 0x22], .error(.badRequest, "invalid UTF-8")),
        ParseCase("invalid UTF-8 overlong encoding", bytes: [0x22, 0xC0, 0xAF, 0x22], .error(.badRequest, "invalid UTF-8")),
        ParseCase("invalid UTF-8 encoded surrogate", bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], .error(.badRequest, "invalid UTF-8")),
        ParseCase("invalid UTF-8 above U+10FFFF", bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .error(.badRequest, "invalid UTF-8")),
        ParseCase("invalid UTF-8 truncated sequence", bytes: [0x22, 0xE2, 0x82], .error(.badRequest, "invalid UTF-8")),
        ParseCase("invalid UTF-8 byte 0xFF", bytes: [0x22, 0xFF, 0x22], .error(.badRequest, "at byte 1")),
        ParseCase("non-ASCII byte outside a string is invalid JSON", bytes: [0x5B, 0xC3, 0xA9, 0x5D], .error(.badRequest, "at byte 1")),
    ]

    @Test(arguments: syntaxCases)
    func rejectsInvalidInput(_ testCase: ParseCase) {
        do {
            let value = try JSONParser().parse(testCase.input)
            Issue.record("\(testCase.rule): parsed \(value)")
        } catch {
            expectError(error, testCase.outcome, testCase.rule)
            #expect(error.byteOffset != nil, "\(testCase.rule): no byte offset")
        }
    }

    @Test func nesting32LevelsIsAccepted() throws {
        let json = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try parse(json)
        let objects = String(repeating: "{\"a\":", count: 31) + "{}" + String(repeating: "}", count: 31)
        _ = try parse(objects)
    }

    @Test func nesting33LevelsIsBadRequest() {
        let json = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: ProtocolError(.badRequest, "JSON nesting deeper than 32 levels", byteOffset: 32)) {
            try parse(json)
        }
        let mixed = String(repeating: "{\"a\":[", count: 17) + String(repeating: "]}", count: 17)
        #expect(throws: ProtocolError.self) { try parse(mixed) }
    }

    @Test func nestingLimitIsConfigurable() throws {
        #expect(throws: ProtocolError.self) { try parse("[[[1]]]", maxDepth: 2) }
        _ = try parse("[[1]]", maxDepth: 2)
        _ = try parse("1", maxDepth: 0)
    }

    @Test func parsesEveryType() throws {
        let value = try parse(#" { "n" : null , "t":true,"f":false,"i":-12,"d":0.5,"s":"x","a":[1,[]],"o":{}} "#)
        #expect(value["n"] == .null)
        #expect(value["t"] == .bool(true))
        #expect(value["f"] == .bool(false))
        #expect(value["i"]?.numberValue?.int64Value == -12)
        #expect(value["d"]?.doubleValue == 0.5)
        #expect(value["s"] == .string("x"))
        #expect(value["a"] == [1, []])
        #expect(value["o"] == .object(JSONObject()))
        #expect(try parse("\"top\"") == "top")
        #expect(try parse("  7  ") == 7)
    }

    @Test func duplicateKeysLastWins() throws {
        let value = try parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value["a"] == 3)
        #expect(value.objectValue?.count == 2)
        #expect(value.objectValue?.keys == ["a", "b"])
    }

    @Test func largeObjectsUseIndexedLookupAndDedupe() throws {
        var json = "{"
        for index in 0..<200 { json += "\"k\(index)\":\(index)," }
        json += "\"k7\":\"last\"}"
        let object = try #require(try parse(json).objectValue)
        #expect(object.count == 200)
        #expect(object["k7"] == "last")
        #expect(object["k199"] == 199)
        #expect(object["missing"] == nil)
    }

    @Test func stringEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u20AC""#) == .string("Aé€"))
        #expect(try parse(#""\uD83D\uDE00 ok""#) == .string("😀 ok"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try parse("\"héllo 😀\"") == .string("héllo 😀"))
        #expect(try parse("\"a\\nb é\"") == .string("a\nb é"))
    }

    struct NumberCase: Sendable, CustomTestStringConvertible {
        let literal: String
        let value: Double
        let isInteger: Bool
        var testDescription: String { "number \(literal)" }
    }

    static let numberCases: [NumberCase] = [
        NumberCase(literal: "0", value: 0, isInteger: true),
        NumberCase(literal: "-0", value: -0.0, isInteger: true),
        NumberCase(literal: "42", value: 42, isInteger: true),
        NumberCase(literal: "1.5", value: 1.5, isInteger: false),
        NumberCase(literal: "1.0", value: 1, isInteger: true),
        NumberCase(literal: "1e3", value: 1000, isInteger: true),
        NumberCase(literal: "120e-1", value: 12, isInteger: true),
        NumberCase(literal: "125e-1", value: 12.5, isInteger: false),
        NumberCase(literal: "0.000123", value: 0.000123, isInteger: false),
        NumberCase(literal: "38.7158", value: 38.7158, isInteger: false),
        NumberCase(literal: "-9.1420", value: -9.142, isInteger: false),
        NumberCase(literal: "9007199254740991", value: 9_007_199_254_740_991, isInteger: true),
        NumberCase(literal: "9007199254740990.5", value: 9_007_199_254_740_990, isInteger: false),
        NumberCase(literal: "12345678901234567890123", value: 12345678901234567890123.0, isInteger: true),
        NumberCase(literal: "1.7976931348623157e308", value: 1.7976931348623157e308, isInteger: true),
        NumberCase(literal: "5e-324", value: .leastNonzeroMagnitude, isInteger: false),
        NumberCase(literal: "1E-2", value: 0.01, isInteger: false),
        NumberCase(literal: "0.1e1", value: 1, isInteger: true),
    ]

    @Test(arguments: numberCases)
    func numbersKeepValueAndIntegerness(_ testCase: NumberCase) throws {
        let number = try #require(try parse(testCase.literal).numberValue)
        #expect(number.value == testCase.value)
        #expect(number.value.sign == testCase.value.sign)
        #expect(number.isInteger == testCase.isInteger)
        #expect(number.sourceRange == 0..<testCase.literal.utf8.count)
    }

    @Test func hugeNumbersAreDetectableAsNotFinite() throws {
        let huge = try #require(try parse("1e400").numberValue)
        #expect(!huge.isFinite)
        #expect(huge.value == .infinity)
        let negative = try #require(try parse("-1e400").numberValue)
        #expect(negative.value == -.infinity)
        let tiny = try #require(try parse("1e-400").numberValue)
        #expect(tiny.value == 0)
        #expect(!tiny.isInteger)
        let longExponent = try #require(try parse("1e999999999999999999999").numberValue)
        #expect(!longExponent.isFinite)
    }

    @Test func parsesFromRawBuffersAndSlices() throws {
        let data = bytes("xx{\"a\":[1,2]}")
        let slice = data[2...]
        #expect(try JSONParser().parse(slice)["a"] == [1, 2])
        let value = try data.withUnsafeBytes { raw throws(ProtocolError) in
            try JSONParser().parse(UnsafeRawBufferPointer(rebasing: raw[2...]))
        }
        #expect(value["a"] == [1, 2])
    }

    @Test func parseNumberAcceptsOnlyOneLiteral() {
        #expect(JSONParser.parseNumber("12.5")?.value == 12.5)
        #expect(JSONParser.parseNumber("12.5 ") == nil)
        #expect(JSONParser.parseNumber("inf") == nil)
        #expect(JSONParser.parseNumber("0x10") == nil)
        #expect(JSONParser.parseNumber("") == nil)
    }
}
