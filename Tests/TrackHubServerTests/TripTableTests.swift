import Testing
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
@testable import TrackHubServer

/// The invariants TripTable and Subscriptions keep (their doc comments list them).
@Suite struct TripTableTests {
    func entry(_ id: String, slot: Int) throws -> TripEntry {
        let route = try Route(lonLatPairs: [[-9.14, 38.70], [-9.14, 38.72]])
        return TripEntry(trip: try Trip(id: id, route: route, waypoints: [], destination: nil, config: TripConfig(), now: 0), createdAt: 0, slot: slot, riderJSON: nil)
    }

    @Test func anIDIsReservedOrPresentNeverBothAndSlotsAreNeverReused() throws {
        let table = TripTable(tickHz: 10)
        let first = table.reserve("a"), again = table.reserve("a")
        #expect(first && !again)  // taken while being created
        table.release("a")
        let afterRelease = table.reserve("a")
        #expect(afterRelease)
        var slots: [Int] = []
        table.add("a") { slot in slots.append(slot); return try! entry("a", slot: slot) }
        #expect(table.creating.isEmpty && table["a"] != nil && table.isTaken("a"))
        let whilePresent = table.reserve("a")
        #expect(!whilePresent)
        table.remove("a")
        table.add("a") { slot in slots.append(slot); return try! entry("a", slot: slot) }
        table.add("b") { slot in slots.append(slot); return try! entry("b", slot: slot) }
        #expect(Set(slots).count == 3)  // a re-created trip gets a new slot
    }

    @Test func theInPlaceWalkVisitsEveryTripOnceWithItsOwnEntry() throws {
        let table = TripTable(tickHz: 10)
        for id in ["a", "b", "c"] { table.add(id) { try! entry(id, slot: $0) } }
        table.remove("b")
        var seen: [String: Int] = [:]
        table.forEachEntryInPlace { id, entry in
            #expect(entry.trip.id == id)
            seen[id, default: 0] += 1
        }
        #expect(seen == ["a": 1, "c": 1])
    }

    @Test func aRemovedTripLeavesNothingBehind() throws {
        let table = TripTable(tickHz: 10)
        table.add("a", lastEventSent: 4) { try! entry("a", slot: $0) }
        table.animating.insert("a")
        table.markStateUnstored("a")
        table.noteEventSent(3, trip: "a")
        #expect(table.lastEvent(of: "a") == 4)  // never goes down
        table.noteEventSent(6, trip: "a")
        #expect(table.lastEvent(of: "a") == 6)
        table.remove("a")
        #expect(table["a"] == nil && !table.animating.contains("a") && table.unstoredState.isEmpty && table.lastEvent(of: "a") == 0)
        table.noteEventSent(9, trip: "a")  // a late send for a gone trip is not remembered
        #expect(table.lastEvent(of: "a") == 0)
    }

    @Test func theArrivedTripsAreKnownWithoutAWalkUntilTheyEndOrGo() throws {
        let table = TripTable(tickHz: 10)
        for id in ["a", "b", "c"] { table.add(id) { try! entry(id, slot: $0) } }
        #expect(table.arrived(atOrBefore: .max).isEmpty)
        /// Drives a trip to its destination (the route's end) until it has arrived.
        func arrive(_ id: String) {
            table.mutate(id) { e in
                let fix = FixInput(lat: 38.72, lon: -9.14, ts: 1000, seq: 1)
                if e.trip.judge(fix) == .applied { _ = e.trip.apply(fix, now: 1000) }
                var now: Int64 = 1000
                while e.trip.status != .arrived && now < 3_600_000 {
                    now += 100
                    _ = e.trip.tick(now: now)
                }
            }
        }
        arrive("b")
        arrive("c")
        let at = try #require(table["b"]?.trip.arrivedAt)
        #expect(table["b"]?.trip.status == .arrived)
        #expect(table.arrived(atOrBefore: at) == ["b", "c"])
        #expect(table.arrived(atOrBefore: at - 1).isEmpty)
        table.mutate("b") { _ = $0.trip.end(now: at + 10) }
        #expect(table.arrived(atOrBefore: .max) == ["c"])  // ended: no longer arrived
        table.remove("c")
        #expect(table.arrived(atOrBefore: .max).isEmpty)  // gone
    }

    @Test func subscriptionsAgreeBothWays() {
        var subscriptions = Subscriptions()
        let one = Session(id: ConnectionID(raw: 1), peerAddress: "", now: 0, fixRate: 0, grants: .everything)
        let two = Session(id: ConnectionID(raw: 2), peerAddress: "", now: 0, fixRate: 0, grants: .everything)
        let added = subscriptions.add(one, to: "t", mode: .frames)
        let modeChanged = subscriptions.add(one, to: "t", mode: .segments)
        let second = subscriptions.add(two, to: "t", mode: .frames)
        #expect(added && !modeChanged && second)  // a new mode is not a new subscription
        #expect(subscriptions.count == 2)
        #expect(subscriptions.followers(of: "t") == [one.id: .segments, two.id: .frames])
        #expect(one.subscriptions == ["t": .segments])
        let removed = subscriptions.remove(one.id, session: one, from: "t")
        let removedAgain = subscriptions.remove(one.id, session: one, from: "t")
        #expect(removed && !removedAgain)
        #expect(one.subscriptions.isEmpty && subscriptions.count == 1)
        subscriptions.remove(two.id, session: nil, from: "t")  // a closed session: already gone
        #expect(subscriptions.followers(of: "t") == nil && subscriptions.count == 0)
    }
}
