import Testing
@testable import TrackHubProtocol

@Test func moduleLoads() { #expect(Bool(true)) }
