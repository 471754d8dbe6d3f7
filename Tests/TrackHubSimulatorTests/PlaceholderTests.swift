import Testing
@testable import TrackHubSimulator

@Test func simulatorModuleLoads() { #expect(Bool(true)) }
