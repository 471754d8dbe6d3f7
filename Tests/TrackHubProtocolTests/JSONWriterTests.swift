import Testing
import TrackHubCore
@testable import TrackHubProtocol

@Suite struct JSONWriterTests {
    private func written(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        body(&writer)
        return text(writer.finish())
    }

    static let controlCharacters: [UInt8] = Array(0..<0x20)

    @Test(arguments: controlCharacters)
    func escapesEveryControlCharacter(_ code: UInt8) throws {
        let string = "a" + String(Character(Unicode.Scalar(code))) + "b"
        let json = written { $0.string(string) }
        let short: [UInt8: String] = [0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"]
        let hex = String(code, radix: 16)
        let expected = short[code] ?? "\\u00" + (hex.count == 1 ? "0" + hex : hex)
        #expect(json == "\"a\(expected)b\"")
        #expect(!json.utf8.contains(where: { $0 < 0x20 }))
        #expect(try parse(json) == .string(string))
    }

    @Test func escapesQuoteBackslashAndLineSeparators() throws {
        let string = "q\"b\\s/\u{2028}\u{2029}\u{7F}é😀"
        let json = written { $0.string(string) }
        #expect(json == "\"q\\\"b\\\\s/\\u2028\\u2029\u{7F}é😀\"")
        #expect(try parse(json) == .string(string))
    }

    struct FormatCase: Sendable, CustomTestStringConvertible {
        let value: Double
        let expected: String
        var testDescription: String { "\(value) → \(expected)" }
    }

    static let coordinateCases: [FormatCase] = [
        FormatCase(value: 38.7158, expected: "38.7158"),
        FormatCase(value: -9.142, expected: "-9.142"),
        FormatCase(value: 0, expected: "0"),
        FormatCase(value: -0.0, expected: "0"),
        FormatCase(value: 1e-8, expected: "0"),
        FormatCase(value: -4e-8, expected: "0"),
        FormatCase(value: 12.345678912, expected: "12.3456789"),
        FormatCase(value: 0.00000123, expected: "0.0000012"),
        FormatCase(value: 180, expected: "180"),
        FormatCase(value: -180, expected: "-180"),
        FormatCase(value: 0.1, expected: "0.1"),
        FormatCase(value: 89.99999999, expected: "90"),
        FormatCase(value: .infinity, expected: "null"),
        FormatCase(value: .nan, expected: "null"),
    ]

    @Test(arguments: coordinateCases)
    func coordinatesHaveAtMostSevenDecimals(_ testCase: FormatCase) {
        #expect(written { $0.coordinate(testCase.value) } == testCase.expected)
    }

    static let doubleCases: [FormatCase] = [
        FormatCase(value: 1, expected: "1"),
        FormatCase(value: -0.0, expected: "0"),
        FormatCase(value: 0.1, expected: "0.1"),
        FormatCase(value: 0.1 + 0.2, expected: "0.30000000000000004"),
        FormatCase(value: 1e16, expected: "1e+16"),
        FormatCase(value: 123456789012345, expected: "123456789012345"),
        FormatCase(value: -2.5e-7, expected: "-2.5e-07"),
        FormatCase(value: .infinity, expected: "null"),
        FormatCase(value: .nan, expected: "null"),
    ]

    @Test(arguments: doubleCases)
    func doublesUseTheShortestRoundTripForm(_ testCase: FormatCase) throws {
        let json = written { $0.double(testCase.value) }
        #expect(json == testCase.expected)
        if testCase.value.isFinite {
            #expect(try parse(json).doubleValue == testCase.value)
        }
    }

    @Test func integers() {
        #expect(written { $0.int(Int64.min) } == "-9223372036854775808")
        #expect(written { $0.int(Int64.max) } == "9223372036854775807")
        #expect(written { $0.int(0) } == "0")
        #expect(written { $0.int(-7) } == "-7")
        #expect(written { $0.int(1_700_000_000_000) } == "1700000000000")
    }

    @Test func builderPlacesCommas() {
        let json = written { w in
            w.beginObject()
            w.field("a", 1)
            w.key("b")
            w.array { a in
                a.int(1)
                a.object { o in o.field("x", true) }
                a.array { _ in }
                a.null()
            }
            w.field("c", "s")
            w.field("d", nil as Double?)
            w.optionalField("e", nil as String?)
            w.coordinateField("lat", 38.71580004)
            w.key("p")
            w.lonLat(lon: -9.142, lat: 38.7158)
            w.key(String("dyn\"k"))
            w.value(["z": [1.5, "t", nil, false]])
            w.endObject()
        }
        #expect(json == #"{"a":1,"b":[1,{"x":true},[],null],"c":"s","d":null,"lat":38.7158,"p":[-9.142,38.7158],"dyn\"k":{"z":[1.5,"t",null,false]}}"#)
    }

    @Test func headroomIsLeftInFrontAndKeptOnReset() {
        var writer = JSONWriter(headroom: 16, capacity: 64)
        writer.object { $0.field("type", "frame") }
        #expect(writer.bytes.count == 16 + writer.count)
        #expect(writer.bytes.prefix(16).allSatisfy { $0 == 0 })
        #expect(text(Array(writer.payload)) == #"{"type":"frame"}"#)
        writer.reset()
        #expect(writer.count == 0)
        writer.int(5)
        #expect(writer.bytes == Array(repeating: 0, count: 16) + bytes("5"))
    }

    @Test func appendsToAnExistingBuffer() {
        var writer = JSONWriter(appendingTo: [1, 2, 3, 4])
        writer.reserveCapacity(32)
        writer.array { $0.int(1); $0.int(2) }
        #expect(writer.headroom == 4)
        #expect(writer.finish() == [1, 2, 3, 4] + bytes("[1,2]"))
    }

    @Test func messageIDsAreWrittenVerbatim() {
        #expect(written { $0.messageID(.number("1.50e0")) } == "1.50e0")
        #expect(written { $0.messageID(.integer(-3)) } == "-3")
        #expect(written { $0.messageID(.string("a\"")) } == #""a\"""#)
        #expect(written { $0.messageID(.number("not a number")) } == #""not a number""#)
    }

    // MARK: random round trips

    private static func randomString(_ rng: inout SplitMix64) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &rng) {
            let pick = Int.random(in: 0..<10, using: &rng)
            let value: UInt32
            switch pick {
            case 0: value = UInt32.random(in: 0..<0x20, using: &rng)
            case 1: value = [0x22, 0x5C, 0x2F, 0x2028, 0x2029, 0x7F].randomElement(using: &rng) ?? 0x22
            case 2: value = UInt32.random(in: 0x80..<0x800, using: &rng)
            case 3: value = UInt32.random(in: 0xE000..<0x10000, using: &rng)
            case 4: value = UInt32.random(in: 0x10000...0x10FFFF, using: &rng)
            default: value = UInt32.random(in: 0x20..<0x7F, using: &rng)
            }
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    private static func randomNumber(_ rng: inout SplitMix64) -> JSONNumber {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return JSONNumber(Int64.random(in: -9_007_199_254_740_991...9_007_199_254_740_991, using: &rng))
        case 1: return JSONNumber(Double.random(in: -180...180, using: &rng))
        case 2:
            while true {
                let value = Double(bitPattern: rng.next())
                if value.isFinite { return JSONNumber(value) }
            }
        default: return JSONNumber(Double(Int.random(in: -1000...1000, using: &rng)) / 8)
        }
    }

    private static func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        let kinds = depth >= 4 ? 4 : 6
        switch Int.random(in: 0..<kinds, using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .number(randomNumber(&rng))
        case 3: return .string(randomString(&rng))
        case 4: return .array((0..<Int.random(in: 0...5, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                object[randomString(&rng)] = randomValue(&rng, depth: depth + 1)
            }
            return .object(object)
        }
    }

    @Test(arguments: [1, 2, 3, 42, 2024] as [UInt64])
    func randomValuesRoundTripThroughTheParser(_ seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let value = Self.randomValue(&rng, depth: 0)
            var writer = JSONWriter(headroom: 8)
            writer.value(value)
            let parsed = try JSONParser().parse(writer.payload)
            #expect(parsed == value, "\(value)")
        }
    }

    @Test(arguments: [7, 8] as [UInt64])
    func randomDoublesRoundTripExactly(_ seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let value = Double(bitPattern: rng.next())
            guard value.isFinite else { continue }
            let json = written { $0.double(value) }
            #expect(try parse(json).doubleValue == value, "\(json)")
        }
    }

    @Test(arguments: [11] as [UInt64])
    func randomCoordinatesRoundTripWithinHalfAUnitOfTheSeventhDecimal(_ seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let value = Double.random(in: -180...180, using: &rng)
            let json = written { $0.coordinate(value) }
            let parsed = try #require(try parse(json).doubleValue)
            #expect(abs(parsed - value) <= 0.5e-7 + 1e-12, "\(json)")
            #expect(!json.hasSuffix("0") || !json.contains("."), "\(json)")
        }
    }
}
