import Testing
@testable import TrackHubProtocol

/// A fixed hub clock for the tests: 2023-11-14T22:13:20Z.
let testNow: Int64 = 1_700_000_000_000

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
