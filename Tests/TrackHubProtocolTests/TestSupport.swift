import Testing
@testable import TrackHubProtocol

/// A fixed hub clock for the tests: 2023-11-14T22:13:20Z.
let testNow: Int64 = 1_700_000_000_000

/// SplitMix64: a small seeded generator so random tests repeat exactly.
struct SeededRNG: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What a table case expects: success (checked by the test) or an error with this code whose
/// message contains `fragment`.
enum Outcome: Sendable {
    case ok
    case error(ErrorCode, String)
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

func parse(_ json: String, maxDepth: Int = 32) throws(ProtocolError) -> JSONValue {
    try JSONParser(maxDepth: maxDepth).parse(bytes(json))
}

/// Checks `error` against an `.error` outcome.
func expectError(_ error: ProtocolError?, _ outcome: Outcome, _ rule: String) {
    guard case .error(let code, let fragment) = outcome else {
        Issue.record("\(rule): expected success, got \(String(describing: error))")
        return
    }
    guard let error else {
        Issue.record("\(rule): expected \(code.rawValue) containing \"\(fragment)\", got success")
        return
    }
    #expect(error.code == code, "\(rule): \(error)")
    #expect(error.message.contains(fragment), "\(rule): message \"\(error.message)\" lacks \"\(fragment)\"")
}
