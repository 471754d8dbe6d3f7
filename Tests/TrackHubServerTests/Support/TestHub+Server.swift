import Foundation
import Testing
import TrackHubTesting
@testable import TrackHubServer

/// What only the server tests ask of a `TestHub`: a checked trip creation, and the hub's
/// own clock (its sub-ticks, which needs the hub's internals).
extension TestHub {
    /// Creates a trip over HTTP and checks the 201.
    @discardableResult
    func createTrip(_ body: [String: Any]) throws -> [String: Any] {
        let (status, json) = try httpJSON("POST", "/v1/trips", json: body)
        #expect(status == 201, "create trip answered \(status): \(json)")
        return json
    }

    /// Sub-ticks the hub has run (from /metrics): a clock that only the hub advances.
    func subTicks() throws -> Int {
        let text = String(decoding: try http("GET", "/metrics").body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("trackhub_tick_duration_seconds_count ") {
            return Int(line.split(separator: " ")[1]) ?? 0
        }
        return 0
    }

    /// Waits until the hub's own clock has moved on by at least `milliseconds` (its sub-ticks).
    func waitForHubTime(milliseconds: Int) throws {
        // From the config, not `services.trips.animating`: that is the service thread's.
        let perSecond = hub.config.tickHz * TickSchedule.phases(tickHz: hub.config.tickHz)
        let target = try subTicks() + (milliseconds * perSecond + 999) / 1000
        try waitUntil("the hub to run \(milliseconds) ms") { try subTicks() >= target }
    }
}
