import Dispatch
import Foundation
import Synchronization
import Testing
import TrackHubCore
@testable import TrackHubStore

/// The store alone, without network: fixes/s through `append` as the hub submits them (a fix
/// batch, then the trip's state after applying it), with at most `window` batches in flight.
/// Prints a number, asserts none. Run with
///   TRACKHUB_STORE_BENCH=1 swift test -c release --filter storeThroughput
@Test(.enabled(if: ProcessInfo.processInfo.environment["TRACKHUB_STORE_BENCH"] != nil))
func storeThroughput() throws {
    for (tripCount, sync) in [(1, SQLiteTripStore.Synchronous.normal), (100, .normal), (1000, .normal), (100, .full)] {
        let dir = TempDir()
        defer { dir.cleanUp() }
        let store = try SQLiteTripStore(directory: dir.path, synchronous: sync)
        var trips = (0..<tripCount).map { makeTrip("b\($0)", waypoints: []) }
        let total = 100_000
        let window = DispatchSemaphore(value: 4000)
        let done = DispatchSemaphore(value: 0)
        let before = store.committedTransactions
        let started = DispatchTime.now().uptimeNanoseconds
        for i in 0..<total {
            let index = i % tripCount
            let seq = Int64(i / tripCount)
            let f = FixInput(lat: 0.00001 * Double(seq), lon: 0, ts: t0 + seq * 1000, seq: seq)
            let verdict = trips[index].judge(f)
            window.wait()
            store.append([.fix(tripID: trips[index].id, fix: f, refusal: verdict.refusal, receivedAt: t0)]) { _ in }
            _ = trips[index].apply(f, now: f.ts)
            store.append([.tripState(trips[index], createdAt: t0, riderJSON: nil)]) { _ in
                window.signal()
                if i == total - 1 { done.signal() }
            }
        }
        done.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let transactions = store.committedTransactions - before
        print("store alone: \(tripCount) trips, sync \(sync.rawValue): \(Int(Double(total) / seconds)) fixes/s, \(transactions) transactions")
        store.close()
    }
}

/// The cost of encoding one trip's state for its row (on the store's writer thread, once per
/// transaction that touched the trip): an animating trip with a waypoint and a few fixes.
/// Prints a number, asserts none. Run with
///   TRACKHUB_STORE_BENCH=1 swift test -c release --filter stateEncodingCost
@Test(.enabled(if: ProcessInfo.processInfo.environment["TRACKHUB_STORE_BENCH"] != nil))
func stateEncodingCost() throws {
    var trip = makeTrip("bench-trip-0001")
    _ = drive(&trip, fixes: (0..<5).map { fix(0.0001 * Double($0), ts: t0 + Int64($0) * 1000, seq: Int64($0)) }, now: t0)
    // The least of five runs: this VM's speed drifts from one second to the next.
    var best = Double.infinity
    var bytes = 0
    for _ in 0..<5 {
        let rounds = 50_000
        bytes = 0
        let started = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<rounds { bytes &+= try SQLiteTripCodec.encodeState(trip).count }
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 / Double(rounds))
        bytes /= rounds
    }
    print("trip state encoding: \(String(format: "%.2f", best * 1e6)) µs a trip (least of 5 runs), \(bytes) bytes")
}
