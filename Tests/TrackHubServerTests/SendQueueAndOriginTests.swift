import Testing
import TrackHubLWS
@testable import TrackHubServer

/// PROTOCOL 7: what a connection's queue keeps, replaces and drops; PROTOCOL 1: Origin and Host.
@Suite struct SendQueueTests {
    func message(_ text: String, _ kind: OutboundMessage.Kind) -> OutboundMessage {
        OutboundMessage(payload: Array(text.utf8), kind: kind)
    }

    func drain(_ queue: inout SendQueue) -> [String] {
        var out: [String] = []
        while let next = queue.pop() { out.append(String(decoding: next.payload, as: UTF8.self)) }
        return out
    }

    @Test func aRepeatedSnapshotReplacesTheWaitingOneAndGoesLast() {
        var queue = SendQueue()
        #expect(queue.push(message("snap-A-1", .snapshot(trip: "A"))) == .appended)
        queue.push(message("event", .reliable))
        queue.push(message("snap-B", .snapshot(trip: "B")))
        #expect(queue.push(message("snap-A-2", .snapshot(trip: "A"))) == .replacedReply)
        #expect(queue.unsentBytes == "event".count + "snap-B".count + "snap-A-2".count)
        #expect(drain(&queue) == ["event", "snap-B", "snap-A-2"])
        #expect(queue.unsentBytes == 0)
    }

    @Test func aSnapshotAlreadyWrittenIsNotReplaced() {
        var queue = SendQueue()
        queue.push(message("snap-1", .snapshot(trip: "A")))
        #expect(drain(&queue) == ["snap-1"])
        #expect(queue.push(message("snap-2", .snapshot(trip: "A"))) == .appended)
        #expect(drain(&queue) == ["snap-2"])
    }

    @Test func viewportAnswersReplaceOnlyTheSameViewport() {
        var queue = SendQueue()
        queue.push(message("v1-a", .viewportReply(key: "v1")))
        queue.push(message("v2", .viewportReply(key: "v2")))
        #expect(queue.push(message("v1-b", .viewportReply(key: "v1"))) == .replacedReply)
        #expect(drain(&queue) == ["v2", "v1-b"])
    }

    @Test func framesReplaceInPlaceAheadOfLaterEvents() {
        var queue = SendQueue()
        queue.push(message("frame-1", .frame(tripSlot: 7)))
        queue.push(message("event", .reliable))
        #expect(queue.push(message("frame-2", .frame(tripSlot: 7))) == .replacedFrame)
        #expect(drain(&queue) == ["frame-2", "event"])
    }

    @Test func reliableMessagesAreNeverReplaced() {
        var queue = SendQueue()
        for i in 0..<5 { queue.push(message("ack-\(i)", .reliable)) }
        #expect(drain(&queue) == (0..<5).map { "ack-\($0)" })
    }

    @Test func aReservationHoldsBackWhatCameAfterItUntilFilled() {
        var queue = SendQueue()
        queue.push(message("before", .reliable))
        let (ticket, outcome) = queue.reserveSnapshot(of: "A")
        #expect(outcome == .appended)
        queue.push(message("event", .reliable))
        queue.push(message("frame-1", .frame(tripSlot: 3)))
        queue.push(message("frame-2", .frame(tripSlot: 3)))  // latest-wins still works behind it
        #expect(drain(&queue) == ["before"])
        #expect(!queue.hasMessageToWrite && !queue.isEmpty)
        let filled = queue.fill(ticket, with: [message("snap", .snapshot(trip: "A")), message("replayed", .reliable)])
        #expect(filled)
        #expect(queue.hasMessageToWrite)
        #expect(drain(&queue) == ["snap", "replayed", "event", "frame-2"])
        #expect(queue.unsentBytes == 0 && queue.isEmpty)
    }

    @Test func aNewerSubscribeReplacesAReservationAndTheOldFillIsIgnored() {
        var queue = SendQueue()
        let first = queue.reserveSnapshot(of: "A").ticket
        queue.push(message("event", .reliable))
        let (second, outcome) = queue.reserveSnapshot(of: "A")
        #expect(outcome == .replacedReply)
        let lateFill = queue.fill(first, with: [message("old-snap", .snapshot(trip: "A"))])
        #expect(!lateFill)
        #expect(drain(&queue) == ["event"])
        let filledWithError = queue.fill(second, with: [message("error", .reliable)])  // an error reply in its place
        #expect(filledWithError)
        #expect(drain(&queue) == ["error"])
        // The key was released with it: a later snapshot appends, nothing stale is replaced.
        let pushed3 = queue.push(message("snap-3", .snapshot(trip: "A")))
        #expect(pushed3 == .appended)
        for i in 0..<200 { queue.push(message("ack-\(i)", .reliable)) }
        #expect(drain(&queue).count == 201)
        let pushed4 = queue.push(message("snap-4", .snapshot(trip: "A")))
        #expect(pushed4 == .appended)
    }

    @Test func aSnapshotForEverySubscriberQueuesBehindASubscribesAnswerAndNeverReplacesIt() {
        var queue = SendQueue()
        let answer = queue.reserveSnapshot(of: "A").ticket
        let (broadcast, outcome) = queue.reserveSnapshot(of: "A", reply: false)
        #expect(outcome == .appended, "the answer's place is kept")
        let broadcastFilled = queue.fill(broadcast, with: [message("new-route-snap", .snapshot(trip: "A"))])
        let answerFilled = queue.fill(answer, with: [message("snap-re-7", .reliable), message("replayed-event", .reliable)])
        #expect(answerFilled && broadcastFilled)
        #expect(drain(&queue) == ["snap-re-7", "replayed-event", "new-route-snap"])
        // A later subscribe's answer still takes the place of a waiting broadcast snapshot.
        queue.push(message("hold", .reliable))
        let waitingBroadcast = queue.reserveSnapshot(of: "A", reply: false).ticket
        let (reply, replaced) = queue.reserveSnapshot(of: "A")
        #expect(replaced == .replacedReply)
        let staleFilled = queue.fill(waitingBroadcast, with: [message("stale", .snapshot(trip: "A"))])
        let replyFilled = queue.fill(reply, with: [message("snap-re-8", .reliable)])
        #expect(!staleFilled && replyFilled)
        #expect(drain(&queue) == ["hold", "snap-re-8"])
    }

    @Test func removeAllReleasesEverything() {
        var queue = SendQueue()
        queue.push(message(String(repeating: "x", count: 1000), .snapshot(trip: "A")))
        queue.removeAll()
        #expect(queue.isEmpty && queue.unsentBytes == 0)
        #expect(queue.push(message("snap", .snapshot(trip: "A"))) == .appended)
    }
}

@Suite struct OriginPolicyTests {
    func policy(secured: Bool = false, tls: Bool = false, allowHosts: [String] = [], allowOrigins: [String] = []) -> OriginPolicy {
        var config = HubConfig()
        config.listenHost = "10.1.2.3"
        config.allowHosts = allowHosts
        config.allowOrigins = allowOrigins
        if secured { config.jwtSecret = "s" }
        if tls { config.tlsCertPath = "c"; config.tlsKeyPath = "k" }
        return OriginPolicy(config: config)
    }

    @Test func originMustMatchSchemeAndAuthority() {
        let plain = policy()
        #expect(plain.allowsOrigin("http://10.1.2.3:8080", host: "10.1.2.3:8080"))
        #expect(!plain.allowsOrigin("https://10.1.2.3:8080", host: "10.1.2.3:8080"))
        #expect(!plain.allowsOrigin("http://evil.example", host: "10.1.2.3:8080"))
        #expect(plain.allowsOrigin(nil, host: "10.1.2.3:8080"))
        let tls = policy(tls: true)
        #expect(tls.allowsOrigin("https://hub.example", host: "hub.example"))
        #expect(!tls.allowsOrigin("http://hub.example", host: "hub.example"))
        #expect(policy(allowOrigins: ["https://shop.example"]).allowsOrigin("https://shop.example", host: "x"))
        #expect(policy(allowOrigins: ["*"]).allowsOrigin("https://any.example", host: "x"))
    }

    @Test func anOpenHubAnswersOnlyItsOwnNames() {
        let open = policy(allowHosts: ["dispatch.example"])
        for host in ["127.0.0.1:8080", "127.9.9.9", "localhost:1", "app.localhost", "[::1]:8080", "10.1.2.3:8080", "dispatch.example:80", "LOCALHOST"] {
            #expect(open.allowsHost(host), "\(host)")
        }
        for host in ["evil.example", "127.0.0.1.evil.example", "127.0.0.256", "10.1.2.4:8080", "[::2]:80", "localhost.evil.example"] {
            #expect(!open.allowsHost(host), "\(host)")
        }
        #expect(open.allowsHost(nil))
        #expect(policy(secured: true).allowsHost("evil.example"))
    }
}
