import Testing
@testable import TrackHubSimulator
import TrackHubTesting

@Suite struct TrackReaderTests {
    @Test func readsCSVWithColumnsInAnyOrder() throws {
        let track = try TrackReader.parse("lat,lon,ts,extra\n60.1,24.9,1000,x\n60.2,24.8,3000,y\n", name: "t")
        #expect(track.points == [.init(ts: 1000, lat: 60.1, lon: 24.9), .init(ts: 3000, lat: 60.2, lon: 24.8)])
        #expect(track.spanMs == 2000)
    }

    @Test func rejectsCSVWithoutTheColumns() {
        #expect(throws: SimulatorError.self) { try TrackReader.parse("time,lat,lon\n1,2,3\n4,5,6\n", name: "t") }
        #expect(throws: SimulatorError.self) { try TrackReader.parse("ts,lat,lon\n1,95,3\n4,5,6\n", name: "t") }
    }

    @Test func dropsPointsWhoseTimeDoesNotIncrease() throws {
        let track = try TrackReader.parse("ts,lat,lon\n1000,1,1\n1000,2,2\n900,3,3\n2000,4,4\n", name: "t")
        #expect(track.points.map(\.ts) == [1000, 2000])
    }

    @Test func readsGPXTrackPointsWithTimes() throws {
        let gpx = """
        <?xml version="1.0"?>
        <gpx version="1.1"><trk><trkseg>
        <trkpt lat="45.2725" lon="13.7115"><ele>200</ele><time>2020-12-18T06:15:50Z</time></trkpt>
        <trkpt lon='13.7116' lat='45.2726'><time>2020-12-18T06:15:51.500Z</time></trkpt>
        <trkpt lat="45.2727" lon="13.7117"><time>2020-12-18T08:15:52+02:00</time></trkpt>
        <trkpt lat="45.2728" lon="13.7118"></trkpt>
        </trkseg></trk></gpx>
        """
        let track = try TrackReader.parse(gpx, name: "v")
        #expect(track.points.count == 3)
        #expect(track.points[0] == .init(ts: 1_608_272_150_000, lat: 45.2725, lon: 13.7115))
        #expect(track.points[1].ts == 1_608_272_151_500)
        #expect(track.points[2].ts == 1_608_272_152_000)
    }

    @Test func rejectsGPXWithoutTimedPoints() {
        #expect(throws: SimulatorError.self) { try TrackReader.parse("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"/></trkseg></trk></gpx>", name: "g") }
    }

    @Test func readsTheShippedSamples() throws {
        let visnjan = try TrackReader.read(path: PackageRoot.samples + "/visnjan_car.gpx")
        #expect(visnjan.points.count == 104)
        let mopsi = try TrackReader.read(path: PackageRoot.samples + "/mopsi_1329920999311.csv")
        #expect(mopsi.points.count == 73)
    }

    @Test func replayKeepsRecordedSpacingFromTheStart() throws {
        // --replay: the first point's time becomes the start, the others keep their spacing.
        let track = RecordedTrack(name: "r", points: [.init(ts: 1_000, lat: 60, lon: 25), .init(ts: 3_000, lat: 60.0001, lon: 25), .init(ts: 9_000, lat: 60.0002, lon: 25)])
        var settings = SimulationSettings()
        settings.speedup = 2
        let start: Int64 = 1_750_000_000_000
        var hub = FakeHub(simulation: Simulation(replay: track, settings: settings), start: start)
        while !hub.simulation.isFinished { hub.step() }
        let first = try #require(hub.fixes.first)
        // The first ts is the moment the trip was created (the replay's start); the first fix
        // goes out on the next step of the fake clock.
        #expect(first.now >= first.ts)
        #expect(hub.fixes.map { $0.ts - first.ts } == [0, 2_000, 8_000])
        #expect(hub.fixes.dropFirst().map { $0.now - first.ts } == [1_000, 4_000])
        #expect(hub.simulation.stats.tripsEnded == 1)
    }

    @Test func replayStartsAtOnceAndEndsAfterItsLastAck() throws {
        // docs/simulator.md: a replay plays the track and exits; no rider pauses around it
        // (a 2-second track used to take up to 23 s: a start spread and an arrival dwell).
        let track = RecordedTrack(name: "r", points: [.init(ts: 1_000, lat: 60, lon: 25), .init(ts: 3_000, lat: 60.0001, lon: 25)])
        let start: Int64 = 1_750_000_000_000
        var hub = FakeHub(simulation: Simulation(replay: track, settings: SimulationSettings()), start: start)
        while !hub.simulation.isFinished { hub.step() }
        let first = try #require(hub.fixes.first)
        let last = try #require(hub.fixes.last)
        // Fake-clock steps of 10 ms: connect, create, first fix; then the fix acked in the same
        // step as it was sent, and the DELETE on the next one.
        #expect(first.now - start <= 30)
        #expect(hub.fixes.map { $0.ts - first.ts } == [0, 2_000])
        #expect(hub.now - last.now <= 10)
        #expect(hub.simulation.stats.tripsEnded == 1)
        // It subscribes from event 0, so `trip_created` (sent before it subscribed) is counted.
        #expect(hub.log.contains { $0.text.contains(#""op":"subscribe""#) && $0.text.contains(#""since_event":0"#) })
    }
}
