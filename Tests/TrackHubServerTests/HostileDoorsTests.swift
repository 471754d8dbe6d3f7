import Foundation
import Synchronization
import Testing
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubRouting
import TrackHubSync
import TrackHubTesting
@testable import TrackHubServer

/// The pieces behind the second round of hostile-client fixes (issue 41), tested without
/// sockets; the same doors against the release binary are in tests-py/test_hostile_doors.py.
@Suite struct RefusalLimiterTests {
    @Test func anAddressIsBlockedAfterItsRateOfRefusalsUntilTheRateFalls() {
        var limiter = RefusalLimiter(ratePerSecond: 5)
        for i in 0..<5 {
            #expect(!limiter.isBlocked("10.0.0.1", now: 1000 + Int64(i)))
            limiter.recordRefusal("10.0.0.1", now: 1000 + Int64(i))
        }
        #expect(limiter.isBlocked("10.0.0.1", now: 1005))
        #expect(!limiter.isBlocked("10.0.0.2", now: 1005), "another address is not blocked")
        // One refusal's worth comes back after 1/5 s.
        #expect(!limiter.isBlocked("10.0.0.1", now: 1005 + 200))
        limiter.recordRefusal("10.0.0.1", now: 1205)
        #expect(limiter.isBlocked("10.0.0.1", now: 1206))
    }

    @Test func offByDefaultAndBounded() {
        var off = RefusalLimiter(ratePerSecond: 0)
        for i in 0..<1000 { off.recordRefusal("a", now: Int64(i)) }
        #expect(!off.isBlocked("a", now: 1000))
        #expect(off.trackedAddresses == 0)

        var limiter = RefusalLimiter(ratePerSecond: 1, maxAddresses: 100)
        for i in 0..<1000 { limiter.recordRefusal("10.0.\(i / 256).\(i % 256)", now: Int64(i)) }
        #expect(limiter.trackedAddresses <= 100)
        #expect(limiter.isBlocked("10.0.3.231", now: 999), "the latest address is kept")
        limiter.sweep(now: 100_000)
        #expect(limiter.trackedAddresses == 0, "refilled buckets are dropped")
    }
}

/// A router whose searches block until released, counting the ones that ran.
final class GatedRouter: Router, @unchecked Sendable {
    let name = "gated"
    let maxSnapDistanceM = 500.0
    let maxPoints = 50
    let ran = HubMutex(0)
    let gate = DispatchSemaphore(value: 0)
    let releaseAll = Atomic<Bool>(false)

    func findRoute(_ query: RouteQuery) -> Result<FoundRoute, RouterError> {
        ran.withLock { $0 += 1 }
        if !releaseAll.load(ordering: .relaxed) { gate.wait() }
        return .failure(.noPath(index: 1))
    }
}

@Suite struct RouterQueueTests {
    static let query = RouteQuery(points: [GeoPoint(lat: 60, lon: 24), GeoPoint(lat: 60.01, lon: 24)], mode: .car)

    @Test func oneOwnerHoldsAtMostItsShareAndTheQueueItsLimit() throws {
        let router = GatedRouter()
        let queue = RouterQueue(router: router, limit: 20)
        #expect(queue.perOwnerLimit == 2)
        let done = HubMutex(0)
        var refusals: [RouterQueue.Refusal?] = []
        for _ in 0..<3 { refusals.append(queue.search(Self.query, owner: "a") { _, _, _ in done.withLock { $0 += 1 } }) }
        #expect(refusals == [nil, nil, .ownerShareFull])
        for i in 0..<18 { #expect(queue.search(Self.query, owner: "b\(i)") { _, _, _ in done.withLock { $0 += 1 } } == nil) }
        #expect(queue.search(Self.query) { _, _, _ in } == .queueFull)
        router.releaseAll.store(true, ordering: .relaxed)
        router.gate.signal()
        try waitUntil("every queued search answered") { done.withLock { $0 } == 20 }
        #expect(queue.depth == 0)
        #expect(queue.search(Self.query, owner: "a") { _, _, _ in } == nil, "the share is given back once answered")
    }

    @Test func aSearchWhoseClientHasGoneIsDroppedUnrun() throws {
        let router = GatedRouter()
        let queue = RouterQueue(router: router, limit: 10)
        let results = HubMutex<[RouterQueue.Skipped?]>([])
        _ = queue.search(Self.query) { _, skipped, _ in results.withLock { $0.append(skipped) } }  // holds the queue
        _ = queue.search(Self.query, owner: "gone", isWanted: { false }) { _, skipped, _ in results.withLock { $0.append(skipped) } }
        router.releaseAll.store(true, ordering: .relaxed)
        router.gate.signal()
        try waitUntil("both searches answered") { results.withLock { $0.count } == 2 }
        #expect(results.withLock { $0 } == [nil, .abandoned])
        #expect(router.ran.withLock { $0 } == 1, "the abandoned search did not run")
    }

    @Test func aSearchNotStartedWithinTheDeadlineIsUnavailableUnrun() throws {
        let router = GatedRouter()
        // The queue's clock is the test's: 1 s passes while the first search runs.
        let clock = Atomic<UInt64>(0)
        let queue = RouterQueue(router: router, limit: 10, startDeadlineSeconds: 0.5, nanosNow: { clock.load(ordering: .relaxed) })
        let results = HubMutex<[(RouterQueue.Skipped?, Result<FoundRoute, RouterError>)]>([])
        _ = queue.search(Self.query) { result, skipped, _ in results.withLock { $0.append((skipped, result)) } }
        _ = queue.search(Self.query) { result, skipped, _ in results.withLock { $0.append((skipped, result)) } }
        try waitUntil("the first search running") { router.ran.withLock { $0 } == 1 }
        clock.store(1_000_000_000, ordering: .relaxed)
        router.releaseAll.store(true, ordering: .relaxed)
        router.gate.signal()
        try waitUntil("both searches answered") { results.withLock { $0.count } == 2 }
        let seen = results.withLock { $0 }
        #expect(seen.first?.0 == nil, "the first started in time and ran")
        #expect(seen.last?.0 == .tooLate)
        if case .failure(.unavailable)? = seen.last?.1 {} else { Issue.record("want unavailable, got \(String(describing: seen.last?.1))") }
        #expect(router.ran.withLock { $0 } == 1)
    }
}

@Suite struct DeviceDoorTests {
    @Test func theFormsDeviceIsFoundWithoutParsingTheRest() {
        #expect(OsmAndRequest.deviceID(formBody: Array("lat=1&lon=2&id=dev%2D1".utf8)) == "dev-1")
        #expect(OsmAndRequest.deviceID(formBody: Array("deviceid=d2&lat=1".utf8)) == "d2")
        #expect(OsmAndRequest.deviceID(formBody: Array("deviceid=d2&id=d1".utf8)) == "d1", "id wins, as in the parser")
        #expect(OsmAndRequest.deviceID(formBody: Array("id=first&lat=1&id=last".utf8)) == "last", "the last one, as in the parser")
        #expect(OsmAndRequest.deviceID(formBody: Array(#"{"device_id":"x"}"#.utf8)) == nil)
        #expect(OsmAndRequest.deviceID(formBody: []) == nil)
        #expect(OsmAndRequest.deviceID(jsonBody: Array(#"{"location":{"coords":{}}, "device_id" : "phone-7"}"#.utf8)) == "phone-7")
        #expect(OsmAndRequest.deviceID(jsonBody: Array(#"{"device_id":"a\u0062"}"#.utf8)) == nil, "an escape: left to the parser")
        #expect(OsmAndRequest.deviceID(jsonBody: Array(#"{"device_id":7}"#.utf8)) == nil)
        #expect(OsmAndRequest.deviceID(jsonBody: Array(#"{"extras":{"device_id":"x"},"note":"\"device_id\":\"y\"","device_id":"real"}"#.utf8)) == "real",
                "only the top-level key counts, not one nested or inside a string")
        #expect(OsmAndRequest.deviceID(jsonBody: Array("id=x".utf8)) == nil)
        #expect(OsmAndRequest.deviceID(formBody: Array("id=&lat=1".utf8)) == nil)
    }

    @Test func aFormOfMoreThan100FieldsIsRefusedNamingTheBody() {
        let fields = (0..<101).map { "p\($0)=\($0)" }.joined(separator: "&")
        do {
            _ = try OsmAndRequest.parse(query: [], body: Array(("id=d&lat=1&lon=2&" + fields).utf8), now: 0)
            Issue.record("a form of 104 fields was parsed")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.hasPrefix("body: a form has at most 100 fields"))
        }
        #expect((try? OsmAndRequest.parse(query: [], body: Array("id=d&lat=1&lon=2".utf8), now: 1_700_000_000_000)) != nil)
    }

    @Test func theOsmAndPortsRootIsTheOsmAndRoute() {
        var request = HTTPRequest(connection: ConnectionID(raw: 1), method: .post, path: "/", query: [("id", " dev ")])
        request.isSecondListener = true
        #expect(DeviceDoor.routedPath(request) == "/v1/osmand")
        #expect(DeviceDoor.deviceBeforeBody(request, route: .osmandPost) == "dev")
        #expect(DeviceDoor.deviceBeforeBody(request, route: .ownTracks(id: "phone")) == "phone")
        request.body = Array("id=body-dev".utf8)
        #expect(DeviceDoor.device(request, route: .osmandPost) == "body-dev")
    }
}

@Suite struct ShareReplayTests {
    @Test func aCustomersReplayedEventHasNoPosition() throws {
        let event = TripEvent(n: 3, kind: .arrived, t: 1_000, position: GeoPoint(lat: 60.1, lon: 24.9))
        let stored = ServerMessages.event(trip: "T1", event)
        let bytes = try #require(ServerMessages.eventWithoutPosition(stored))
        let message = ServerMessage(bytes)
        _ = try message.object()  // well-formed JSON, strictly
        #expect(message.type == .event && message.isNull("lat") && message.isNull("lon"))
        #expect(message.int("n") == 3 && message.string("name") == "arrived" && message.string("trip") == "T1")
        #expect(!String(decoding: bytes, as: UTF8.self).contains("60.1"))
        #expect(ServerMessages.eventWithoutPosition(Array("[1]".utf8)) == nil)
    }
}

@Suite struct LogEscapeTests {
    @Test func controlCharactersAreWrittenEscapedNeverRaw() {
        let line = LogLine(timeMillis: 0, level: .info, message: "bell \u{07} esc \u{1b}[31m", fields: [
            ("path", .string("/\u{1b}[31mred")), ("peer", .string("a\u{7f}b\u{9b}c")),
        ])
        let text = line.encoded(.text)
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7f && $0.value <= 0x9f) })
        #expect(text.contains(#"path="/\x1b[31mred""#))
        #expect(text.contains(#"esc \x1b[31m"#))
        #expect(text.contains(#"peer="a\x7fb\x9bc""#))
        let json = line.encoded(.json)
        #expect(!json.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func deviceIDsInPathsAreNotLogged() {
        #expect(Hub.loggedPath("/v1/devices/devA-0123456789abcdef") == "/v1/devices/{device}")
        #expect(Hub.loggedPath("/v1/owntracks/phone-0123456789abcd") == "/v1/owntracks/{device}")
        #expect(Hub.loggedPath("/v1/devices") == "/v1/devices")
        #expect(Hub.loggedPath("/v1/trips/T1") == "/v1/trips/T1")
    }
}
