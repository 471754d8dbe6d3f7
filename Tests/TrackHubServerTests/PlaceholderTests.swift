import Testing
@testable import TrackHubServer

@Test func moduleLoads() { #expect(Bool(true)) }
