import Testing
@testable import TrackHubStore

@Test func moduleLoads() { #expect(Bool(true)) }
