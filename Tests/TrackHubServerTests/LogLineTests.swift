import Foundation
import Testing
@testable import TrackHubServer

/// The encoding of one log line (PROTOCOL 14): JSON objects with `time`, `level`, `msg` and
/// the event's fields; text lines with the same facts after the time stamp.
@Suite struct LogLineTests {
    // 2025-06-01T10:00:00.042Z
    static let time: Int64 = 1_748_772_000_042

    static func request() -> LogLine {
        LogLine(timeMillis: time, level: .info, message: "http request", fields: [
            ("method", .string("GET")), ("path", .string("/v1/trips")), ("status", .int(200)),
            ("duration_s", .seconds(0.0004125)), ("peer", .string("::1")),
        ])
    }

    @Test func timestampsAreISO8601UTCWithMilliseconds() {
        #expect(LogLine.timestamp(Self.time) == "2025-06-01T10:00:00.042Z")
        #expect(LogLine.timestamp(0) == "1970-01-01T00:00:00.000Z")
        #expect(LogLine.timestamp(951_782_400_999) == "2000-02-29T00:00:00.999Z")
    }

    @Test func jsonLineIsOneObjectWithTheFields() throws {
        let text = Self.request().encoded(.json)
        #expect(!text.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["time"] as? String == "2025-06-01T10:00:00.042Z")
        #expect(object["level"] as? String == "info")
        #expect(object["msg"] as? String == "http request")
        #expect(object["method"] as? String == "GET")
        #expect(object["status"] as? Int == 200)
        #expect(object["peer"] as? String == "::1")
        #expect((object["duration_s"] as? Double).map { abs($0 - 0.000413) < 1e-9 } == true)
        // The order PROTOCOL 14 lists them in: time, level, msg first.
        #expect(text.hasPrefix(#"{"time":"2025-06-01T10:00:00.042Z","level":"info","msg":"http request","method":"GET""#))
    }

    @Test func jsonEscapesAndRedactsStrings() throws {
        let line = LogLine(timeMillis: Self.time, level: .warn, message: "quote \" backslash \\ newline \n tab \t",
                           fields: [("uri", .string("/v1/ws?token=abc"))])
        let text = line.encoded(.json)
        #expect(!text.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["msg"] as? String == "quote \" backslash \\ newline \n tab \t")
        #expect(object["uri"] as? String == "/v1/ws?token=[redacted]")
    }

    @Test func textLineStartsWithTheTimeAndCarriesTheFacts() {
        #expect(Self.request().encoded(.text)
            == "2025-06-01T10:00:00.042Z info http request method=GET path=/v1/trips status=200 duration_s=0.000413 peer=::1")
        let quoted = LogLine(timeMillis: Self.time, level: .error, message: "two\nlines", fields: [("reason", .string("bad signature"))])
        #expect(quoted.encoded(.text) == "2025-06-01T10:00:00.042Z error two lines reason=\"bad signature\"")
    }

    @Test func secondsAreDecimalNeverExponent() {
        #expect(LogLine.decimal(0.00000123) == "0.000001")
        #expect(LogLine.decimal(12.5) == "12.500000")
        #expect(LogLine.decimal(0) == "0.000000")
        #expect(LogLine.decimal(.nan) == "0")
    }
}
