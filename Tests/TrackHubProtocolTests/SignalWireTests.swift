import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// PROTOCOL 18 on the wire: the signal events with their fields, and what a share link's
/// replay and snapshot leave out.
@Suite struct SignalWireTests {
    static let t: Int64 = 1_700_000_000_000
    static let here = GeoPoint(lat: 38.7, lon: -9.1)

    @Test func signalEventsCarryTheirFields() {
        let lost = ServerMessages.event(trip: "T1", TripEvent(n: 4, kind: .signalLost(lastFixT: Self.t - 20_000, battery: 37), t: Self.t, position: Self.here))
        #expect(text(lost) == #"{"type":"event","trip":"T1","n":4,"name":"signal_lost","t":1700000000000,"lat":38.7,"lon":-9.1,"last_fix_t":1699999980000,"battery":37}"#)
        let lostUnknownBattery = ServerMessages.event(trip: "T1", TripEvent(n: 4, kind: .signalLost(lastFixT: Self.t, battery: nil), t: Self.t, position: nil))
        #expect(text(lostUnknownBattery).hasSuffix(#""lat":null,"lon":null,"last_fix_t":1700000000000,"battery":null}"#))
        let back = ServerMessages.event(trip: "T1", TripEvent(n: 5, kind: .signalBack(gapMs: 21_500), t: Self.t, position: Self.here))
        #expect(text(back).hasSuffix(#""name":"signal_back","t":1700000000000,"lat":38.7,"lon":-9.1,"gap_ms":21500}"#))
        let low = ServerMessages.event(trip: "T1", TripEvent(n: 6, kind: .batteryLow(battery: 14), t: Self.t, position: Self.here))
        #expect(text(low).hasSuffix(#""name":"battery_low","t":1700000000000,"lat":38.7,"lon":-9.1,"battery":14}"#))
    }

    @Test func aShareReplayHasNoBattery() throws {
        let low = ServerMessages.event(trip: "T1", TripEvent(n: 6, kind: .batteryLow(battery: 14), t: Self.t, position: Self.here))
        let replayed = try parse(text(try #require(ServerMessages.eventWithoutPosition(low))))
        #expect(replayed["battery"] == .null)
        #expect(replayed["lat"] == .null)
        #expect(replayed["name"] == "battery_low")
        // An event without a battery does not get one.
        let back = ServerMessages.event(trip: "T1", TripEvent(n: 5, kind: .signalBack(gapMs: 1), t: Self.t, position: Self.here))
        #expect(try parse(text(try #require(ServerMessages.eventWithoutPosition(back))))["battery"] == nil)
    }

    @Test func aShareLinksLiveEventHasNoBattery() throws {
        let low = ServerMessages.event(trip: "T1", TripEvent(n: 6, kind: .batteryLow(battery: 14), t: Self.t, position: Self.here))
        let live = try parse(text(try #require(ServerMessages.eventWithoutBattery(low))))
        #expect(live["battery"] == .null)
        #expect(live["lat"] == 38.7)  // live events keep their positions
        // Nothing to hide: the stored bytes go as they are.
        let back = ServerMessages.event(trip: "T1", TripEvent(n: 5, kind: .signalBack(gapMs: 1), t: Self.t, position: Self.here))
        #expect(ServerMessages.eventWithoutBattery(back) == nil)
        let unknown = ServerMessages.event(trip: "T1", TripEvent(n: 7, kind: .signalLost(lastFixT: Self.t, battery: nil), t: Self.t, position: nil))
        #expect(ServerMessages.eventWithoutBattery(unknown) == nil)
    }

    @Test func snapshotCarriesTheSignalAndHidesTheBatteryFromACustomer() throws {
        var trip = try Trip(id: "T1", route: nil, waypoints: [], destination: nil, config: TripConfig(), now: Self.t)
        var fix = FixInput(lat: 38.7, lon: -9.1, ts: Self.t, seq: 1)
        fix.batteryPercent = 66.6
        #expect(trip.judge(fix) == .applied)
        _ = trip.noteStoredFix(fix, arrivedAt: Self.t + 50, now: Self.t + 50)
        _ = trip.apply(fix, now: Self.t + 50)
        var view = TripView(id: "T1", trip: trip, now: Self.t + 100)
        let full = try parse(text(ServerMessages.snapshot(view, re: nil, recovered: nil)))
        #expect(full["last_fix_t"] == .number(JSONNumber(Self.t + 50)))
        #expect(full["battery"] == 67)
        #expect(full["stale"] == false)
        view.audience = .customer
        let customer = try parse(text(ServerMessages.snapshot(view, re: nil, recovered: nil)))
        #expect(customer["battery"] == .null)
        #expect(customer["last_fix_t"] == .number(JSONNumber(Self.t + 50)))
    }

    @Test func aSingleRiderInClustersSaysWhetherItIsStale() throws {
        let items = [FleetItem(id: "T1", lat: 1, lon: 2, count: 1, trip: "T1", status: "moving", bearing: 0, stale: true)]
        let viewport = Viewport(west: -10, south: -10, east: 10, north: 10, zoom: 5)
        let body = try parse(text(FleetMessages.clustersBody(t: Self.t, viewport: viewport, total: 1, truncated: false, items: items)))
        #expect(body["items"]?.arrayValue?.first?["stale"] == true)
    }
}
