import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// The shapes real phones send (Traccar Client, OsmAnd, OwnTracks; PROTOCOL 11).
@Suite struct DeviceProtocolTests {
    /// 2026-01-01T00:00:00Z: every sample time is before it.
    static let now: Int64 = 1_767_225_600_000

    static func osmand(_ query: String, body: String = "") throws -> DeviceFix {
        // The host hands over the query without the path: `/?a=1` is `a=1`.
        let items = try QueryString.parse(query.drop(while: { $0 == "/" })).items
        return try OsmAndRequest.parse(query: items, body: Array(body.utf8), now: now)
    }

    static func osmandError(_ query: String, body: String = "") -> ProtocolError? {
        do {
            _ = try osmand(query, body: body)
            return nil
        } catch let error as ProtocolError {
            return error
        } catch {
            return nil
        }
    }

    @Test func readsTraccarClientQueryWithSecondsAndKnots() throws {
        let got = try Self.osmand("/?id=123456789012345&timestamp=1504763810&lat=40.7232948571&lon=-74.0061408571&bearing=7.19889788244&speed=40&ignition=true&rpm=933&fuel=24")
        #expect(got.device == "123456789012345")
        #expect(got.fix.ts == 1_504_763_810_000)
        #expect(got.fix.lat == 40.7232948571)
        #expect(got.fix.lon == -74.0061408571)
        #expect(got.fix.heading == 7.19889788244)
        #expect(abs((got.fix.speedMps ?? 0) - 40 * 0.514444) < 1e-9)
        #expect(got.fix.seq == nil)
    }

    @Test(arguments: [
        ("timestamp=1442068686579", Int64(1_442_068_686_579)),
        ("timestamp=1377177267", Int64(1_377_177_267_000)),
        ("timestamp=2016-01-27T18%3A55%3A47Z", Int64(1_453_920_947_000)),
        ("timestamp=2016-01-27T20%3A55%3A47%2B02%3A00", Int64(1_453_920_947_000)),
        ("timestamp=2016-01-27T20%3A55%3A47.250%2B0200", Int64(1_453_920_947_250)),
        ("timestamp=2014-06-04+09%3A10%3A11", Int64(1_401_873_011_000)),
        ("timestamp=2014-06-04%2009:10:11", Int64(1_401_873_011_000)),
    ])
    func readsEveryTimestampForm(stamp: String, expected: Int64) throws {
        let got = try Self.osmand("/?id=902064&lat=42.06288&lon=-88.23412&\(stamp)&hdop=6.0&altitude=224.0&speed=0.0")
        #expect(got.fix.ts == expected)
        #expect(got.fix.altitudeM == 224)
        #expect(got.fix.speedMps == 0)
    }

    @Test func missingTimestampIsTheHubsClock() throws {
        let got = try Self.osmand("/?id=861001000719969&lat=41.666667&lon=-0.883333&altitude=350.059479&speed=0.000000&batt=87")
        #expect(got.fix.ts == Self.now)
        #expect(got.fix.batteryPercent == 87)
    }

    @Test func readsDeviceidHeadingAndLocation() throws {
        let a = try Self.osmand("/?lat=60.0&lon=30.0&speed=0.0&heading=0.0&vacc=0&hacc=0&altitude=0&deviceid=123456")
        #expect(a.device == "123456")
        #expect(a.fix.heading == 0)
        let b = try Self.osmand("/?id=123456&timestamp=1377177267&location=60.0,30.0")
        #expect(b.fix.lat == 60)
        #expect(b.fix.lon == 30)
    }

    @Test func readsAFormBodyOverTheQuery() throws {
        let got = try Self.osmand("/?id=ignored1", body: "id=abc123&lat=38.7&lon=-9.14&timestamp=1700000000&accuracy=12.5&bearing=370")
        #expect(got.device == "abc123")
        #expect(got.fix.accuracyM == 12.5)
        #expect(got.fix.heading == 10)
        #expect(got.fix.ts == 1_700_000_000_000)
    }

    @Test func negativeValuesAreUnknown() throws {
        let got = try Self.osmand("/?id=abc123&lat=1&lon=2&speed=-1&bearing=-1&accuracy=-1&batt=-1")
        #expect(got.fix.speedMps == nil)
        #expect(got.fix.heading == nil)
        #expect(got.fix.accuracyM == nil)
        #expect(got.fix.batteryPercent == nil)
    }

    @Test func readsTraccarClientJSON() throws {
        let body = """
            {"location":{"extras":{},"mock":true,"coords":{"speed_accuracy":-1,"speed":-1,"longitude":-122.406417,\
            "ellipsoidal_altitude":0,"floor":0,"heading_accuracy":-1,"latitude":37.785834,"accuracy":5,\
            "altitude_accuracy":-1,"altitude":12.5,"heading":-1},"is_moving":false,"age":3,"odometer":0,\
            "uuid":"5b1b9d1f","event":"motionchange","battery":{"level":0.79,"is_charging":false},\
            "activity":{"type":"still"},"timestamp":"2025-01-14T10:21:18.123Z"},"device_id":"phone-4711"}
            """
        let got = try Self.osmand("/", body: body)
        #expect(got.device == "phone-4711")
        #expect(got.fix.lat == 37.785834)
        #expect(got.fix.lon == -122.406417)
        #expect(got.fix.speedMps == nil)
        #expect(got.fix.heading == nil)
        #expect(got.fix.accuracyM == 5)
        #expect(got.fix.altitudeM == 12.5)
        #expect(got.fix.batteryPercent == 79)
        #expect(got.fix.ts == 1_736_850_078_123)
    }

    @Test(arguments: [
        ("/?timestamp=1377177267&lat=60.0&lon=30.0", "id"),
        ("/?id=a%20b&lat=1&lon=2", "id"),
        ("/?id=abc&lat=1", "lon"),
        ("/?id=abc&lon=1", "lat"),
        ("/?id=abc", "lat"),
        ("/?id=abc&lat=91&lon=1", "lat"),
        ("/?id=abc&lat=1&lon=181", "lon"),
        ("/?id=abc&lat=x&lon=1", "lat"),
        ("/?id=abc&location=1", "location"),
        ("/?id=abc&lat=1&lon=2&timestamp=yesterday", "timestamp"),
        ("/?id=abc&lat=1&lon=2&timestamp=2016-01-27T18:55:47", "timestamp"),
        ("/?id=abc&lat=1&lon=2&timestamp=1", "timestamp"),
        ("/?id=abc&lat=1&lon=2&timestamp=4102444800", "timestamp"),
        ("/?id=abc&lat=1&lon=2&speed=fast", "speed"),
        ("/?id=abc&lat=1&lon=2&batt=120", "batt"),
    ])
    func refusesMalformedQueriesNamingTheField(query: String, field: String) {
        let error = Self.osmandError(query)
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "no error")")
    }

    @Test(arguments: [
        (#"{"location":{"coords":{"latitude":1,"longitude":2}}}"#, "device_id"),
        (#"{"device_id":"abc","location":{}}"#, "location.coords"),
        (#"{"device_id":"abc"}"#, "location"),
        (#"{"device_id":"abc","location":{"coords":{"latitude":"1","longitude":2}}}"#, "location.coords.latitude"),
        (#"{"device_id":"abc","location":{"timestamp":"soon","coords":{"latitude":1,"longitude":2}}}"#, "location.timestamp"),
        (#"{"device_id":"abc","location":{"coords":{"latitude":1,"longitude":2},"battery":{"level":7}}}"#, "location.battery.level"),
        (#"{"device_id":"abc","location":"#, "body"),
    ])
    func refusesMalformedJSONNamingTheField(body: String, field: String) {
        let error = Self.osmandError("/", body: body)
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains(field) == true, "\(error?.message ?? "no error")")
    }

    @Test func readsOwnTracksLocation() throws {
        let body = #"{"_type":"location","acc":15,"alt":440,"batt":46,"conn":"w","lat":46.0681247,"lon":11.1512805,"t":"u","tid":"5t","tst":1551874878,"vac":2,"vel":36,"cog":271}"#
        let got = try #require(try OwnTracksMessage.parse(device: "owntracks-phone", body: Array(body.utf8), now: Self.now))
        #expect(got.device == "owntracks-phone")
        #expect(got.fix.ts == 1_551_874_878_000)
        #expect(got.fix.accuracyM == 15)
        #expect(got.fix.altitudeM == 440)
        #expect(got.fix.batteryPercent == 46)
        #expect(abs((got.fix.speedMps ?? 0) - 10) < 1e-9)
        #expect(got.fix.heading == 271)
    }

    @Test func ignoresOwnTracksMessagesOfOtherTypes() throws {
        for body in [#"{"_type":"transition","event":"enter"}"#, #"{"_type":"lwt","tst":1}"#, #"{"_type":"waypoints","waypoints":[]}"#] {
            #expect(try OwnTracksMessage.parse(device: "p1", body: Array(body.utf8), now: Self.now) == nil)
        }
    }

    @Test func refusesOwnTracksWithoutTypeOrPosition() {
        #expect(throws: ProtocolError.badRequest("_type is required")) {
            try OwnTracksMessage.parse(device: "p1", body: Array(#"{"lat":1,"lon":2}"#.utf8), now: Self.now)
        }
        #expect(throws: ProtocolError.self) {
            try OwnTracksMessage.parse(device: "p1", body: Array(#"{"_type":"location","lon":2}"#.utf8), now: Self.now)
        }
    }

    @Test func calendarTimestampsRejectImpossibleDates() {
        #expect(DeviceTimestamp.parse("2023-02-29 10:00:00") == nil)
        #expect(DeviceTimestamp.parse("2024-02-29 10:00:00") == 1_709_200_800_000)
        #expect(DeviceTimestamp.parse("2024-13-01T00:00:00Z") == nil)
        #expect(DeviceTimestamp.parse("2024-01-01T00:00:00+25:00") == nil)
    }

    @Test func theBodiesTheSimulatorSendsReadBackAsSent() throws {
        let body = DeviceRequestBodies.ownTracksLocation(lat: 60.17, lon: 24.94, tstSeconds: 1_700_000_000, tid: "sm", velKmh: 36, cog: 90, accM: 5)
        #expect(String(decoding: body, as: UTF8.self) == #"{"_type":"location","lat":60.17,"lon":24.94,"tst":1700000000,"tid":"sm","vel":36,"cog":90,"acc":5}"#)
        let fix = try #require(try OwnTracksMessage.parse(device: "phone-1", body: body, now: 1_700_000_001_000))
        #expect(fix.fix.ts == 1_700_000_000_000 && fix.fix.speedMps == 10 && fix.fix.heading == 90 && fix.fix.accuracyM == 5)
        let device = DeviceRequestBodies.device(trip: "T1", name: "Alex")
        #expect(String(decoding: device, as: UTF8.self) == #"{"trip":"T1","name":"Alex"}"#)
        let decoded = try DeviceRequest.decode(device)
        #expect(decoded.trip == "T1" && decoded.name == "Alex")
    }
}
