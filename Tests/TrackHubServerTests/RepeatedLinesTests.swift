import Testing
@testable import TrackHubServer

/// A libwebsockets line in a tight loop is printed once a second with its count.
@Suite struct RepeatedLinesTests {
    @Test func aRepeatedLineIsCountedAndTheCountGoesOutWithTheNextLine() {
        var lines = RepeatedLines()
        #expect(lines.admit("accept: errno 24", nowMs: 0) == ["accept: errno 24"])
        for t in 1...500 { #expect(lines.admit("accept: errno 24", nowMs: Int64(t)).isEmpty) }
        #expect(lines.admit("other", nowMs: 600) == ["the previous line repeated 500 more times", "other"])
        #expect(lines.admit("other", nowMs: 700).isEmpty)
        #expect(lines.admit("other", nowMs: 1600) == ["the previous line repeated 1 more times", "other"])
        #expect(lines.admit("third", nowMs: 1601) == ["third"])
    }
}
