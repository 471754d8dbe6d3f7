import Foundation
import Testing
import TrackHubCrypto
import TrackHubCore
import TrackHubProtocol
@testable import TrackHubServer

/// PROTOCOL 12's pure parts: the retry schedule, the signature, the secret, and the per-URL
/// queue (order per trip, independence of trips, skips, the memory bound, drops after 24 h).
@Suite struct WebhookTests {
    // MARK: - Backoff

    @Test func retriesAfterOneSecondDoublingUpToFiveMinutes() {
        let b = WebhookBackoff()
        #expect((1...12).map { b.delayMs(afterFailures: $0) } == [
            1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, 300_000,
        ])
        #expect(b.delayMs(afterFailures: 10_000) == 300_000)
    }

    @Test func aShorterBaseKeepsTheDoublingAndTheCap() {
        let b = WebhookBackoff(baseMs: 10)
        #expect((1...4).map { b.delayMs(afterFailures: $0) } == [10, 20, 40, 80])
        #expect(b.delayMs(afterFailures: 40) == 300_000)
    }

    @Test func givesUpTwentyFourHoursAfterTheEventWasQueued() {
        let b = WebhookBackoff()
        #expect(!b.isExpired(queuedAt: 0, now: 24 * 3_600_000 - 1))
        #expect(b.isExpired(queuedAt: 0, now: 24 * 3_600_000))
    }

    // MARK: - Signature and secret

    /// The Standard Webhooks specification's own example, signed with our HMAC.
    @Test func signsAsStandardWebhooksExampleDoes() throws {
        let key = try #require(WebhookSecret.key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let mac = try #require(HMACSHA256.mac(key: key, data: Array(#"msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}"#.utf8)))
        #expect("v1," + Data(mac).base64EncodedString() == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func signatureCoversIDTimestampAndBody() throws {
        let payload = try Self.payload(trip: "T1", n: 1, name: "trip_created", t: 1_700_000_000_000)
        // Computed with Python's hmac over "T1:1.1700000123." + the body.
        #expect(WebhookSignature.header(key: Array("not-a-whsec-secret".utf8), payload: payload, timestamp: 1_700_000_123)
            == "v1,A4DiAipn5HOtvyWNbJxbEWI9s+uFQM00VJEW8UWx/X4=")
    }

    @Test func aPlainSecretIsItsBytesAWhsecSecretItsDecodedBytes() {
        #expect(WebhookSecret.key("hunter2") == Array("hunter2".utf8))
        #expect(WebhookSecret.key("whsec_AAEC") == [0, 1, 2])
        #expect(WebhookSecret.key("whsec_not base64!") == nil)
        #expect(WebhookSecret.key("whsec_") == nil)
        #expect(WebhookSecret.key("") == nil)
    }

    // MARK: - The queue

    static func payload(trip: String, n: Int, name: String = "arrived", t: Int64 = 1_700_000_000_000) throws -> WebhookPayload {
        let kind: TripEventKind = name == "trip_created" ? .tripCreated : (name == "ended" ? .ended : .arrived)
        return try WebhookPayload(storedEvent: ServerMessages.event(trip: trip, TripEvent(n: n, kind: kind, t: t, position: nil)))
    }

    static func body(trip: String, n: Int, name: String = "arrived", t: Int64 = 0) -> [UInt8] {
        let kind: TripEventKind = name == "trip_created" ? .tripCreated : (name == "ended" ? .ended : .arrived)
        return ServerMessages.event(trip: trip, TripEvent(n: n, kind: kind, t: t, position: nil))
    }

    private func queue(limits: WebhookQueue.Limits = .init(), names: Set<String>? = nil, positions: [String: Int] = [:]) -> WebhookQueue {
        WebhookQueue(url: "http://r/", eventNames: names, backoff: WebhookBackoff(baseMs: 1000), limits: limits, positions: positions)
    }

    private let noStore: (String, Int, Int) -> [[UInt8]]? = { _, _, _ in
        Issue.record("the store was read")
        return nil
    }

    @Test func sendsATripsEventsOneAtATimeInOrder() throws {
        var q = queue()
        for n in 1...3 { q.eventStored(trip: "A", n: n, payload: try Self.payload(trip: "A", n: n), now: 0) }
        var sent: [Int] = []
        for _ in 1...3 {
            let batch = q.nextDeliveries(now: 0, fetch: noStore)
            #expect(batch.count == 1)  // the next one waits for this one
            #expect(q.nextDeliveries(now: 0, fetch: noStore).isEmpty)
            sent += batch.map(\.payload.n)
            #expect(q.finished(trip: "A", outcome: .delivered, now: 0) == .delivered)
        }
        #expect(sent == [1, 2, 3])
        #expect(q.pending == 0 && q.delivered == 3)
        #expect(q.takeDirtyPositions() == ["A": 3])
    }

    @Test func aFailedEventIsRetriedBeforeTheNextOneAfterTheBackoff() throws {
        var q = queue()
        for n in 1...2 { q.eventStored(trip: "A", n: n, payload: try Self.payload(trip: "A", n: n), now: 0) }
        #expect(q.nextDeliveries(now: 0, fetch: noStore).map(\.payload.n) == [1])
        #expect(q.finished(trip: "A", outcome: .failed(status: 500), now: 10) == .retryAt(1010))
        #expect(q.nextDeliveries(now: 1009, fetch: noStore).isEmpty)
        #expect(q.nextWake() == 1010)
        let retry = q.nextDeliveries(now: 1010, fetch: noStore)
        #expect(retry.map(\.payload.n) == [1] && retry.first?.attempt == 2)
        #expect(q.finished(trip: "A", outcome: .failed(status: 0), now: 1010) == .retryAt(3010))
        _ = q.nextDeliveries(now: 3010, fetch: noStore)
        #expect(q.finished(trip: "A", outcome: .delivered, now: 3010) == .delivered)
        #expect(q.nextDeliveries(now: 3010, fetch: noStore).map(\.payload.n) == [2])
        #expect(q.failed == 2 && q.delivered == 1)
    }

    @Test func aFailingTripDoesNotHoldUpAnother() throws {
        var q = queue()
        q.eventStored(trip: "A", n: 1, payload: try Self.payload(trip: "A", n: 1), now: 0)
        q.eventStored(trip: "B", n: 1, payload: try Self.payload(trip: "B", n: 1), now: 0)
        #expect(Set(q.nextDeliveries(now: 0, fetch: noStore).map(\.trip)) == ["A", "B"])
        _ = q.finished(trip: "A", outcome: .failed(status: 503), now: 0)
        q.eventStored(trip: "B", n: 2, payload: try Self.payload(trip: "B", n: 2), now: 0)
        _ = q.finished(trip: "B", outcome: .delivered, now: 0)
        #expect(q.nextDeliveries(now: 0, fetch: noStore).map(\.trip) == ["B"])
    }

    @Test func atMostMaxInFlightRequestsAtOnce() throws {
        var q = queue(limits: .init(maxLoaded: 100, maxInFlight: 2, fetchBatch: 10))
        for trip in ["A", "B", "C"] { q.eventStored(trip: trip, n: 1, payload: try Self.payload(trip: trip, n: 1), now: 0) }
        #expect(q.nextDeliveries(now: 0, fetch: noStore).count == 2)
        #expect(q.inFlight == 2)
        #expect(q.nextDeliveries(now: 0, fetch: noStore).isEmpty)
        _ = q.finished(trip: "A", outcome: .delivered, now: 0)
        #expect(q.nextDeliveries(now: 0, fetch: noStore).map(\.trip) == ["C"])
    }

    @Test func eventsNotSelectedAreSkippedAndMoveThePosition() throws {
        var q = queue(names: ["arrived"])
        q.eventStored(trip: "A", n: 1, payload: try Self.payload(trip: "A", n: 1, name: "trip_created"), now: 0)
        q.eventStored(trip: "A", n: 2, payload: try Self.payload(trip: "A", n: 2, name: "arrived"), now: 0)
        #expect(q.nextDeliveries(now: 0, fetch: noStore).map(\.payload.n) == [2])
        _ = q.finished(trip: "A", outcome: .delivered, now: 0)
        #expect(q.pending == 0 && q.delivered == 1)
        #expect(q.takeDirtyPositions() == ["A": 2])
    }

    @Test func pastTheMemoryBoundBodiesAreReadBackFromTheStoreInOrder() throws {
        var q = queue(limits: .init(maxLoaded: 2, maxInFlight: 4, fetchBatch: 2))
        for n in 1...5 { q.eventStored(trip: "A", n: n, payload: try Self.payload(trip: "A", n: n), now: 0) }
        #expect(q.loadedCount == 2)
        #expect(q.pending == 5)
        var reads: [(Int, Int)] = []
        let store: (String, Int, Int) -> [[UInt8]]? = { trip, after, limit in
            reads.append((after, limit))
            return (after + 1...min(5, after + limit)).map { Self.body(trip: trip, n: $0) }
        }
        var sent: [Int] = []
        while let d = q.nextDeliveries(now: 0, fetch: store).first {
            sent.append(d.payload.n)
            #expect(q.loadedCount <= 2)
            _ = q.finished(trip: "A", outcome: .delivered, now: 0)
        }
        #expect(sent == [1, 2, 3, 4, 5])
        #expect(reads.map(\.0) == [2, 4])
        #expect(q.pending == 0)
    }

    @Test func atStartUpWhatIsAfterThePositionIsReadFromTheStore() throws {
        var q = queue(positions: ["A": 2])
        q.knowEvents(trip: "A", upTo: 4, now: 0)
        #expect(q.pending == 2)
        let store: (String, Int, Int) -> [[UInt8]]? = { trip, after, limit in
            (after + 1...min(4, after + limit)).map { Self.body(trip: trip, n: $0) }
        }
        let first = q.nextDeliveries(now: 0, fetch: store)
        #expect(first.map(\.payload.webhookID) == ["A:3"])
        _ = q.finished(trip: "A", outcome: .delivered, now: 0)
        // A live event arriving meanwhile comes after the stored ones.
        q.eventStored(trip: "A", n: 5, payload: try Self.payload(trip: "A", n: 5), now: 0)
        var rest: [Int] = []
        while let d = q.nextDeliveries(now: 0, fetch: store).first {
            rest.append(d.payload.n)
            _ = q.finished(trip: "A", outcome: .delivered, now: 0)
        }
        #expect(rest == [4, 5])
    }

    @Test func anEventFailingForTwentyFourHoursIsDroppedAndCounted() throws {
        var q = queue()
        q.eventStored(trip: "A", n: 1, payload: try Self.payload(trip: "A", n: 1), now: 0)
        q.eventStored(trip: "A", n: 2, payload: try Self.payload(trip: "A", n: 2), now: 0)
        var now: Int64 = 0
        var verdict = WebhookQueue.Verdict.delivered
        while verdict != .dropped {
            #expect(q.nextDeliveries(now: now, fetch: noStore).first?.payload.n == 1)
            verdict = q.finished(trip: "A", outcome: .failed(status: 500), now: now)
            if case .retryAt(let at) = verdict { now = at }
        }
        #expect(now >= 24 * 3_600_000)
        #expect(q.dropped == 1)
        #expect(q.nextDeliveries(now: now, fetch: noStore).first?.payload.n == 2)
    }

    @Test func eventsGoneFromTheStoreAreNotWaitedFor() {
        var q = queue()
        q.knowEvents(trip: "A", upTo: 3, now: 0)
        #expect(q.nextDeliveries(now: 0, fetch: { _, _, _ in [] }).isEmpty)
        #expect(q.pending == 0)
    }

    @Test func aForgottenTripsIDStartsAgainFromOne() throws {
        var q = queue(positions: ["A": 7])
        q.forget(trip: "A")
        q.eventStored(trip: "A", n: 1, payload: try Self.payload(trip: "A", n: 1), now: 0)
        #expect(q.nextDeliveries(now: 0, fetch: noStore).map(\.payload.webhookID) == ["A:1"])
    }

    @Test func anAnswerForNoRequestUnderWayChangesNothing() throws {
        var q = queue()
        q.eventStored(trip: "A", n: 1, payload: try Self.payload(trip: "A", n: 1), now: 0)
        #expect(q.finished(trip: "A", outcome: .delivered, now: 0) == .ignored)
        #expect(q.finished(trip: "B", outcome: .failed(status: 500), now: 0) == .ignored)
        #expect(q.pending == 1 && q.delivered == 0 && q.failed == 0)
        #expect(q.nextDeliveries(now: 0, fetch: noStore).map(\.payload.n) == [1])
    }

    @Test func theOldestPendingAgeIsTheHeadsWait() throws {
        var q = queue()
        q.eventStored(trip: "A", n: 1, payload: try Self.payload(trip: "A", n: 1), now: 1000)
        q.eventStored(trip: "B", n: 1, payload: try Self.payload(trip: "B", n: 1), now: 4000)
        #expect(q.oldestPendingMs(now: 5000) == 4000)
        #expect(queue().oldestPendingMs(now: 5000) == 0)
    }

    @Test func metricLabelsAreEscaped() {
        #expect(WebhookMetrics.label(#"http://h/"q"\x"#) == #"http://h/\"q\"\\x"#)
        let text = WebhookMetrics.render([.init(url: "http://r/", delivered: 3, failed: 1, dropped: 0, pending: 2, oldestPendingMs: 1500)])
        #expect(text.contains(#"trackhub_webhook_deliveries_total{url="http://r:80#1",result="ok"} 3"#))
        #expect(text.contains(#"trackhub_webhook_pending{url="http://r:80#1"} 2"#))
        #expect(text.contains(#"trackhub_webhook_oldest_pending_seconds{url="http://r:80#1"} 1.5"#))
    }

    /// PROTOCOL 12: `/metrics` is public, so the label keeps only scheme, host and port and
    /// the URL's place in the list; userinfo, path, query and fragment may hold a secret.
    @Test func theURLLabelShowsNoCredential() {
        #expect(WebhookMetrics.urlLabel("http://user:pass@127.0.0.1:8123/hook?api_key=K", place: 1) == "http://127.0.0.1:8123#1")
        #expect(WebhookMetrics.urlLabel("HTTPS://Hooks.Example.com/x/y#frag", place: 2) == "https://hooks.example.com:443#2")
        #expect(WebhookMetrics.urlLabel("http://[::1]:9000/p", place: 3) == "http://[::1]:9000#3")
        #expect(WebhookMetrics.urlLabel("http://a:b@[::1]?token=t", place: 4) == "http://[::1]:80#4")
        #expect(WebhookMetrics.urlLabel("not a url", place: 5) == "#5")
        let text = WebhookMetrics.render([
            .init(url: "http://u:p@h:1/s?k=v", delivered: 0, failed: 0, dropped: 0, pending: 0, oldestPendingMs: 0),
            .init(url: "https://h2/secret-path", delivered: 0, failed: 0, dropped: 0, pending: 0, oldestPendingMs: 0),
        ])
        for leaked in ["u:p", "/s", "k=v", "secret-path"] { #expect(!text.contains(leaked)) }
        #expect(text.contains(#"trackhub_webhook_pending{url="https://h2:443#2"} 0"#))
    }
}
