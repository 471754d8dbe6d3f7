import Testing
@testable import TrackHubProtocol

@Suite struct CloseCodeTests {
    /// PROTOCOL 1, 2, 7 and 9 and RFC 6455 7.4.1: the codes the hub closes with or logs.
    @Test func closeCodesAreTheProtocolsNumbers() {
        let expected: [(CloseCode, UInt16)] = [
            (.normal, 1000), (.goingAway, 1001), (.unsupportedData, 1003), (.noStatusReceived, 1005),
            (.abnormalClosure, 1006), (.invalidPayload, 1007), (.policyViolation, 1008), (.messageTooBig, 1009),
        ]
        for (code, value) in expected {
            #expect(code.rawValue == value)
            #expect(CloseCode(rawValue: value) == code)
        }
        #expect(CloseCode.allCases.count == expected.count)
    }
}
