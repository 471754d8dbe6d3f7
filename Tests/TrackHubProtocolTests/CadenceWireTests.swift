import Testing
@testable import TrackHubProtocol

/// PROTOCOL 18's messages for couriers: `cadence` over the WebSocket, and OwnTracks's own
/// remote configuration in the answer to its location.
@Suite struct CadenceWireTests {
    @Test func cadenceHasItsMembersAndNoRe() throws {
        let bytes = ServerMessages.cadence(trip: "T:1", intervalMs: 2000, watched: true)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"type":"cadence","trip":"T:1","interval_ms":2000,"watched":true}"#)
        try ProtocolSchemaTests.expectMembers(bytes, "{trip, interval_ms, watched}", after: ["type"], "cadence")
        let read = ServerMessage(ServerMessages.cadence(trip: "T1", intervalMs: 30_000, watched: false))
        #expect(read.type == .cadence && read.int("interval_ms") == 30_000 && read.bool("watched") == false && read.re == nil)
    }

    @Test func ownTracksIsAnsweredEmptyOrWithOneSetConfiguration() throws {
        #expect(OwnTracksAnswer.body(settingIntervalMs: nil) == Array("[]".utf8))
        let body = OwnTracksAnswer.body(settingIntervalMs: 2000)
        #expect(String(decoding: body, as: UTF8.self) ==
            #"[{"_type":"cmd","action":"setConfiguration","configuration":{"_type":"configuration","monitoring":2,"locatorInterval":2,"moveModeLocatorInterval":2}}]"#)
        #expect(OwnTracksAnswer.requestedIntervalMs(in: body) == 2000)
        #expect(OwnTracksAnswer.requestedIntervalMs(in: Array("[]".utf8)) == nil)
        #expect(OwnTracksAnswer.requestedIntervalMs(in: Array("not json".utf8)) == nil)
    }

    @Test func ownTracksIntervalsAreWholeSecondsRoundedUp() {
        #expect(OwnTracksAnswer.seconds(ofMs: 100) == 1)
        #expect(OwnTracksAnswer.seconds(ofMs: 1000) == 1)
        #expect(OwnTracksAnswer.seconds(ofMs: 1500) == 2)
        #expect(OwnTracksAnswer.seconds(ofMs: 30_000) == 30)
        #expect(OwnTracksAnswer.requestedIntervalMs(in: OwnTracksAnswer.body(settingIntervalMs: 1500)) == 2000)
    }
}
