import Testing
import TrackHubCore
import TrackHubStore
@testable import TrackHubServer

/// Cluster mode's device table: every node must end with the same devices and the same
/// `last_seen`, whatever order its reads brought the device's partition and its trips'
/// partitions in (only each partition's own order is fixed).
@Suite struct ClusterDevicesTests {
    /// One log entry touching a device: in the device's partition (0) or a trip's (1, 2).
    enum Step {
        case put(at: Int64, trip: String?)
        case delete(at: Int64)
        case fix(at: Int64, partition: Int, lat: Double)
        var partition: Int {
            if case .fix(_, let partition, _) = self { return partition }
            return 0
        }
    }

    static func run(_ steps: [Step], id: String = "phone") -> ClusterDevices {
        var devices = ClusterDevices()
        for step in steps {
            switch step {
            case .put(let at, let trip): _ = devices.put(id, trip: trip, name: nil, at: at)
            case .delete: _ = devices.delete(id)
            case .fix(let at, let partition, let lat):
                _ = devices.sighted(id, .init(at: at, sequence: 0, partition: partition, position: GeoPoint(lat: lat, lon: 0)))
            }
        }
        return devices
    }

    /// Every interleaving of the partitions' own sequences (what some node may apply).
    static func interleavings(_ steps: [Step]) -> [[Step]] {
        var queues: [Int: [Step]] = [:]
        for step in steps { queues[step.partition, default: []].append(step) }
        func merge(_ queues: [Int: [Step]]) -> [[Step]] {
            let open = queues.filter { !$0.value.isEmpty }
            if open.isEmpty { return [[]] }
            var result: [[Step]] = []
            for (partition, queue) in open {
                var rest = queues
                rest[partition] = Array(queue.dropFirst())
                result += merge(rest).map { [queue[0]] + $0 }
            }
            return result
        }
        return merge(queues)
    }

    @Test(arguments: [
        // Registered, two fixes from two trips' partitions: the later one shows.
        [Step.put(at: 10, trip: "a"), .fix(at: 20, partition: 1, lat: 1), .fix(at: 30, partition: 2, lat: 2)],
        // A fix sent just before a delete (by a node that had not applied it) and a new
        // registration after: the old fix must not show on the new registration.
        [Step.put(at: 10, trip: "a"), .fix(at: 20, partition: 1, lat: 1), .delete(at: 30), .put(at: 50, trip: nil), .fix(at: 40, partition: 1, lat: 9)],
        // Deleted, registered again, a fix after that: it shows, even where it was applied first.
        [Step.put(at: 10, trip: "a"), .delete(at: 30), .put(at: 35, trip: "b"), .fix(at: 40, partition: 1, lat: 4)],
        // Rebound: the registration time stays, the fixes before the rebind still count.
        [Step.put(at: 10, trip: "a"), .fix(at: 20, partition: 1, lat: 1), .put(at: 30, trip: "b")],
    ])
    func everyOrderOfThePartitionsEndsAlike(_ steps: [Step]) {
        let orders = Self.interleavings(steps)
        #expect(orders.count > 1)
        let expected = Self.run(steps).device("phone")
        for order in orders {
            #expect(Self.run(order).device("phone") == expected, "order \(order)")
        }
    }

    @Test func theLatestFixByLogPositionIsTheLastSeen() {
        let devices = Self.run([.put(at: 10, trip: "a"), .fix(at: 30, partition: 2, lat: 3), .fix(at: 20, partition: 1, lat: 2)])
        let device = devices.device("phone")
        #expect(device?.lastSeen == 30)
        #expect(device?.lastPosition == GeoPoint(lat: 3, lon: 0))
        #expect(device?.trip == "a")
    }

    @Test func aFixBeforeItsRegistrationWasAppliedShowsOnceItIs() {
        var devices = ClusterDevices()
        #expect(devices.sighted("phone", .init(at: 20, sequence: 0, partition: 1, position: GeoPoint(lat: 1, lon: 1))) == nil)
        let device = devices.put("phone", trip: "a", name: "Ana", at: 10)
        #expect(device.lastSeen == 20)
        #expect(device.name == "Ana")
    }

    @Test func aDeleteOfAnUnknownDeviceIsRefused() {
        var devices = ClusterDevices()
        #expect(devices.delete("nobody") == nil)
        _ = devices.put("phone", trip: nil, name: nil, at: 1)
        #expect(devices.delete("phone")?.id == "phone")
        #expect(devices.device("phone") == nil)
        #expect(devices.all.isEmpty)
    }

    @Test func sightingsOfUnregisteredIdsArePrunedOnceNoRegistrationCanCome() {
        var devices = Self.run([.put(at: 10, trip: nil), .fix(at: 20, partition: 1, lat: 1), .delete(at: 30)])
        devices.pruneSightings(appliedBefore: 15)
        #expect(devices.sightings["phone"] != nil, "a registration at or before 20 could still be applied")
        devices.pruneSightings(appliedBefore: 40)
        #expect(devices.sightings["phone"] == nil)
        var registered = Self.run([.put(at: 10, trip: nil), .fix(at: 20, partition: 1, lat: 1)])
        registered.pruneSightings(appliedBefore: 40)
        #expect(registered.device("phone")?.lastSeen == 20, "a registered device keeps its sighting")
    }

    @Test func theTableSurvivesASnapshotRoundTrip() throws {
        let devices = Self.run([.put(at: 10, trip: "a"), .fix(at: 20, partition: 1, lat: 1)])
        let snapshot = ClusterSnapshot(partitions: 4, positions: [], watermark: 5, writtenBy: "n", trips: [], devices: devices)
        let decoded = try ClusterSnapshot.decode(try snapshot.encoded())
        #expect(decoded.devices == devices)
        let old = try ClusterSnapshot.decode(Array(#"{"version":1,"partitions":4,"positions":[],"watermark":5,"writtenBy":"n","trips":[]}"#.utf8))
        #expect(old.devices == nil, "a snapshot from before devices were shared still loads")
    }
}
