import Dispatch
import Foundation
import TrackHubCore
import TrackHubSync
@testable import TrackHubStore

/// A fresh temporary directory, removed by `cleanUp()`.
struct TempDir {
    let path: String

    init() {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("trackhub-store-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var dbPath: String { (path as NSString).appendingPathComponent(SQLiteTripStore.fileName) }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }
}

/// Appends and waits for the completion.
@discardableResult
func appendAndWait(_ store: any TripStore, _ records: [StoreRecord]) -> Result<Void, StoreError> {
    let done = DispatchSemaphore(value: 0)
    let result = HubMutex<Result<Void, StoreError>?>(nil)
    store.append(records) { outcome in
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 }!
}

func isSuccess(_ result: Result<Void, StoreError>) -> Bool {
    if case .success = result { return true }
    return false
}

let t0: Int64 = 1_700_000_000_000

/// A straight route north along the meridian, about 2.2 km, with a waypoint half way.
func makeTrip(_ id: String = "t1", waypoints: [GeoPoint] = [GeoPoint(lat: 0.01, lon: 0)]) -> Trip {
    let route = try! Route(points: [GeoPoint(lat: 0, lon: 0), GeoPoint(lat: 0.01, lon: 0), GeoPoint(lat: 0.02, lon: 0)])
    return try! Trip(id: id, route: route, waypoints: waypoints, destination: nil, config: TripConfig(), now: t0)
}

/// The trip's whole state as canonical JSON (Trip is not Equatable; its coding is complete).
func canonical(_ trip: Trip) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try! encoder.encode(trip)
}

/// Drives a trip through fixes as the hub does: judge, store the fix, apply, store the state and
/// events. Returns the records in the order the hub would append them.
func drive(_ trip: inout Trip, fixes: [FixInput], now: Int64, rider: [UInt8]? = nil) -> [StoreRecord] {
    var records: [StoreRecord] = []
    for fix in fixes {
        let verdict = trip.judge(fix)
        records.append(.fix(tripID: trip.id, fix: fix, refusal: verdict.refusal, receivedAt: now))
        var events: [TripEvent] = []
        if verdict.isApplied {
            events += trip.apply(fix, now: fix.ts).events
        }
        events += trip.tick(now: fix.ts + 60_000).events
        records.append(.tripState(trip, createdAt: t0, riderJSON: rider))
        for event in events {
            records.append(.event(tripID: trip.id, n: event.n, encoded: Array("{\"n\":\(event.n)}".utf8)))
        }
    }
    return records
}

func fix(_ lat: Double, ts: Int64, seq: Int64?) -> FixInput {
    FixInput(lat: lat, lon: 0, ts: ts, seq: seq, durationMs: 1000, speedMps: 5, heading: 0, accuracyM: 5)
}
