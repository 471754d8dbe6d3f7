import Testing
@testable import TrackHubCore

@Test func moduleLoads() { #expect(Bool(true)) }
