import Foundation
import Testing
import TrackHubCore
import TrackHubProtocol
@testable import TrackHubSimulator

/// `simulate --stops N` follows each stop as a customer would (PROTOCOL 17): a share link per
/// stop, a WebSocket per link presenting its token, and a one-line summary when it ends.
@Suite struct StopCustomerTests {
    /// A hub stand-in that has just created the rider's first trip (T1) with `stops` stops.
    static func hubWithTrip(stops: Int = 2, follows: Bool = true, openHub: Bool = false) throws -> FakeHub {
        var (settings, catalog) = try MultiStopTripTests.straightRoute(stops: stops, speedup: 10)
        settings.followsStopLinks = follows
        var hub = FakeHub(simulation: Simulation(settings: settings, catalog: catalog))
        hub.issuesNoLinks = openHub
        while hub.createdBy[0] == nil { hub.step() }
        hub.step()
        return hub
    }

    @Test func eachStopGetsItsLinkAndACustomerOnItsToken() throws {
        let hub = try Self.hubWithTrip()
        #expect(hub.shares.map(\.path) == ["/v1/trips/T1/share", "/v1/trips/T1/share"])
        let bodies = try hub.shares.map { try JSONParser().parse(Array($0.body.utf8)) }
        #expect(bodies.map { $0["stop"]?.stringValue } == ["stop-1", "stop-2"])
        #expect(bodies.allSatisfy { $0["visible_within_stops"]?.numberValue?.int64Value == 1 })
        #expect(hub.linkOpens.map(\.token) == ["token-stop-1", "token-stop-2"])
        // Subscribed in segments mode without `stop`: the token names it.
        #expect(hub.linkLog.count == 2)
        for sent in hub.linkLog {
            let message = try JSONParser().parse(Array(sent.text.utf8))
            #expect(message["op"]?.stringValue == "subscribe" && message["trip"]?.stringValue == "T1")
            #expect(message["mode"]?.stringValue == "segments" && message["stop"] == nil)
        }
    }

    @Test func aCustomerSummarisesTheCountdownTheShowingAndTheEnd() throws {
        var hub = try Self.hubWithTrip()
        let link = try #require(hub.linkOpens.first { $0.token == "token-stop-2" }?.link)
        let stop = #"{"type":"stop","trip":"T1","stop":"stop-2","stops_before":%d,"eta_s":300,"visible":%@}"#
        hub.sendToLink(rider: 0, link: link, #"{"type":"snapshot","trip":"T1","status":"moving","position":null,"stop":{"id":"stop-2","stops_before":1,"eta_s":null,"remaining_m":null,"reached":false}}"#)
        hub.sendToLink(rider: 0, link: link, String(format: stop, 1, "false"))
        hub.step(65_000)
        hub.sendToLink(rider: 0, link: link, String(format: stop, 0, "true"))
        hub.sendToLink(rider: 0, link: link, #"{"type":"segment","trip":"T1","seq":4,"t0":1,"duration_ms":1000,"path":[[25,60]]}"#)
        hub.sendToLink(rider: 0, link: link, #"{"type":"event","trip":"T1","n":5,"name":"waypoint_reached","stop":"stop-2","lat":60,"lon":25}"#)
        #expect(hub.simulation.stats.linksFollowed == 0)
        hub.sendToLink(rider: 0, link: link, #"{"type":"unsubscribed","trip":"T1","reason":"arrived"}"#)
        let stats = hub.simulation.stats
        #expect(stats.linksFollowed == 1)
        let line = try #require(stats.linkSummaries.last)
        #expect(line.hasPrefix(#"link T1 stop-2 "Order 2 of rider 1": stops before 1 → 0 · shown after 1m05s · 1 segments · arrived"#), "\(line)")
        #expect(hub.linkCloses.map(\.link) == [link])
        #expect(stats.errors == 0)
        #expect(Array(stats.linkSummaries(after: 0)) == [line] && stats.linkSummaries(after: 1).isEmpty)
    }

    @Test func aPositionWhileHiddenIsAnError() throws {
        var hub = try Self.hubWithTrip()
        let link = try #require(hub.linkOpens.first?.link)
        hub.sendToLink(rider: 0, link: link, #"{"type":"stop","trip":"T1","stop":"stop-1","stops_before":0,"eta_s":null,"visible":false}"#)
        hub.sendToLink(rider: 0, link: link, #"{"type":"segment","trip":"T1","seq":1,"t0":1,"duration_ms":0,"path":[[25,60]]}"#)
        hub.sendToLink(rider: 0, link: link, #"{"type":"unsubscribed","trip":"T1","reason":"stop_removed"}"#)
        let stats = hub.simulation.stats
        #expect(stats.linkSummaries.last?.contains("1 segments (1 while hidden) · stop removed") == true, "\(stats.linkSummaries)")
        #expect(stats.errors == 1)
    }

    @Test func anOpenHubIssuesNoLinksSoTheCustomerSubscribesToTheStop() throws {
        var hub = try Self.hubWithTrip(openHub: true)
        #expect(hub.linkOpens.map(\.token) == [nil, nil])
        let subscribe = try JSONParser().parse(Array(try #require(hub.linkLog.first).text.utf8))
        #expect(subscribe["stop"]?.stringValue == "stop-1")
        let link = try #require(hub.linkOpens.last?.link)
        hub.sendToLink(rider: 0, link: link, #"{"type":"snapshot","trip":"T1","status":"moving","position":{"lat":60,"lon":25},"stop":{"id":"stop-2","stops_before":1,"eta_s":null,"remaining_m":null,"reached":false}}"#)
        hub.sendToLink(rider: 0, link: link, #"{"type":"event","trip":"T1","n":3,"name":"waypoint_resumed","stop":"stop-1","lat":60,"lon":25}"#)
        hub.sendToLink(rider: 0, link: link, #"{"type":"event","trip":"T1","n":4,"name":"waypoint_reached","stop":"stop-2","lat":60,"lon":25}"#)
        let line = try #require(hub.simulation.stats.linkSummaries.last)
        #expect(line.contains("(open hub, no link: subscribe {stop}): stops before 1 → 0 · shown after 0s"), "\(line)")
        #expect(line.contains("· arrived"))
        #expect(hub.simulation.stats.errors == 0)
    }

    @Test func noStopLinksFollowsNothing() throws {
        let hub = try Self.hubWithTrip(follows: false)
        #expect(hub.shares.isEmpty && hub.linkOpens.isEmpty)
    }
}
