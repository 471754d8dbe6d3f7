import Testing
@testable import TrackHubProtocol

/// One framing case: the method's need for a length, the raw `Content-Length` (repeated
/// headers joined by `,`, nil when absent), whether `Transfer-Encoding` was sent, and the
/// framing expected (nil: 400 naming `Content-Length`).
struct FramingCase: Sendable, CustomTestStringConvertible {
    let rule: String
    let requiresLength: Bool
    let contentLength: String?
    let transferEncoding: Bool
    let expected: HTTPFraming?
    var testDescription: String { rule }
    init(_ rule: String, post: Bool = true, _ contentLength: String?, transferEncoding: Bool = false, _ expected: HTTPFraming?) {
        self.rule = rule
        self.requiresLength = post
        self.contentLength = contentLength
        self.transferEncoding = transferEncoding
        self.expected = expected
    }
}

@Suite struct HTTPFramingTests {
    static let cases: [FramingCase] = [
        FramingCase("a length frames the body", "12", .body(length: 12)),
        FramingCase("spaces and tabs around the digits are allowed", " 12 ", .body(length: 12)),
        FramingCase("a tab before the digits is allowed", "\t7\t", .body(length: 7)),
        FramingCase("0 is no body", "0", .noBody),
        FramingCase("0 on a GET is no body", post: false, "0", .noBody),
        FramingCase("leading zeros are the same number", "007", .body(length: 7)),
        FramingCase("18 digits is the longest taken", "999999999999999999", .body(length: 999_999_999_999_999_999)),
        FramingCase("-1 is refused", "-1", nil),
        FramingCase("+1 is refused", "+1", nil),
        FramingCase("12abc is refused", "12abc", nil),
        FramingCase("a space inside the digits is refused", "1 2", nil),
        FramingCase("10^23 is refused (too large to represent)", "100000000000000000000000", nil),
        FramingCase("19 digits is refused", "1000000000000000000", nil),
        FramingCase("a hex length is refused", "0x10", nil),
        FramingCase("an empty value is refused", "", nil),
        FramingCase("spaces only is refused", "  ", nil),
        FramingCase("repeated (5,5) is refused", "5,5", nil),
        FramingCase("repeated with spaces is refused", "5, 5", nil),
        FramingCase("repeated and different is refused", "5,6", nil),
        FramingCase("missing on POST or PUT is refused", nil, nil),
        FramingCase("missing on GET or DELETE is no body", post: false, nil, .noBody),
        FramingCase("Transfer-Encoding is refused", nil, transferEncoding: true, nil),
        FramingCase("Transfer-Encoding is refused even with a length", "12", transferEncoding: true, nil),
        FramingCase("Transfer-Encoding is refused on a GET", post: false, nil, transferEncoding: true, nil),
    ]

    @Test(arguments: cases)
    func framing(_ testCase: FramingCase) {
        do {
            let framing = try HTTPFraming.decide(
                requiresLength: testCase.requiresLength, contentLength: testCase.contentLength,
                hasTransferEncoding: testCase.transferEncoding)
            #expect(framing == testCase.expected, "\(testCase.rule): got \(framing)")
        } catch {
            #expect(testCase.expected == nil, "\(testCase.rule): refused with \(error)")
            #expect(error.code == .badRequest, "\(testCase.rule): \(error)")
            #expect(error.message.contains("Content-Length"), "\(testCase.rule): message \"\(error.message)\" does not name Content-Length")
        }
    }
}
