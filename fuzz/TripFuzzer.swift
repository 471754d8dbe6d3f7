// libFuzzer harness over the trip state machine (PROTOCOL section 6): the input is read as a
// trip set-up followed by a stream of commands (fix, tick, proceed, reroute, end), run the
// way the hub runs them (judge, then apply the applied ones). After every step the trip's
// invariants are checked; a broken one traps. Built by scripts/fuzz.sh.
import TrackHubCore

private struct Reader {
    var bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    var isAtEnd: Bool { offset >= bytes.count }
    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }
    mutating func u16() -> Int { Int(byte()) << 8 | Int(byte()) }
    /// A signed offset in [-1, 1).
    mutating func unit() -> Double { Double(u16()) / 32768 - 1 }
    /// Occasionally an extreme value, to reach NaN-free edge handling.
    mutating func wild() -> Double {
        switch byte() % 16 {
        case 0: return 0
        case 1: return -1e9
        case 2: return 1e12
        case 3: return Double(u16()) * 1000
        default: return Double(u16()) / 10
        }
    }
}

private let base = GeoPoint(lat: 38.7158, lon: -9.1420)

private func point(_ r: inout Reader, spread: Double) -> GeoPoint {
    GeoPoint(lat: base.lat + r.unit() * spread, lon: base.lon + r.unit() * spread)
}

private func routePoints(_ r: inout Reader) -> [GeoPoint] {
    let count = 2 + Int(r.byte() % 12)
    var points: [GeoPoint] = []
    switch r.byte() % 3 {
    case 0:  // a straight line east
        for i in 0..<count { points.append(GeoPoint(lat: base.lat, lon: base.lon + Double(i) * 0.002)) }
    case 1:  // an out-and-back: the same street twice
        for i in 0..<count { points.append(GeoPoint(lat: base.lat, lon: base.lon + Double(i) * 0.002)) }
        for i in (0..<count - 1).reversed() { points.append(GeoPoint(lat: base.lat + 0.00001, lon: base.lon + Double(i) * 0.002)) }
    default:
        for _ in 0..<count { points.append(point(&r, spread: 0.02)) }
    }
    return points
}

private func check(_ trip: Trip, at now: Int64, lastEvent: inout Int, events: [TripEvent]) {
    for event in events {
        precondition(event.n == lastEvent + 1, "event numbers must rise by one: \(lastEvent) then \(event.n)")
        lastEvent = event.n
    }
    precondition(trip.lastEventNumber == lastEvent, "lastEventNumber \(trip.lastEventNumber) != \(lastEvent)")
    if let marker = trip.marker(at: now) {
        precondition(marker.position.lat.isFinite && marker.position.lon.isFinite, "marker not finite")
        precondition(abs(marker.position.lat) <= 90 && abs(marker.position.lon) <= 180.000001, "marker out of range")
        precondition(marker.bearingDeg.isFinite && marker.bearingDeg >= 0 && marker.bearingDeg < 360, "bearing \(marker.bearingDeg)")
    }
    let info = trip.progressInfo(at: now)
    if let progress = info.progress {
        precondition(progress.isFinite && progress >= -1e-9 && progress <= 1 + 1e-9, "progress \(progress)")
    }
    if let eta = info.etaS { precondition(eta >= 0, "eta \(eta)") }
    if let done = info.doneM { precondition(done.isFinite && done >= -1e-6, "done_m \(done)") }
    if let remaining = info.remainingM { precondition(remaining.isFinite && remaining >= -1e-6, "remaining_m \(remaining)") }
    precondition(trip.leg >= 0 && trip.leg <= trip.waypoints.count, "leg \(trip.leg)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 2 else { return 0 }
    var r = Reader(bytes: UnsafeBufferPointer(start: data, count: size))
    let routed = r.byte() % 4 != 0
    let points = routed ? routePoints(&r) : []
    let route = routed ? try? Route(points: points) : nil
    var waypoints: [GeoPoint] = []
    for _ in 0..<Int(r.byte() % 4) { waypoints.append(point(&r, spread: 0.01)) }
    let config = TripConfig(
        arrivalBufferM: 1 + Double(r.byte()) * 3, rerouteDistanceM: 10 + Double(r.u16() % 2000),
        waitAtWaypoints: r.byte() % 2 == 0, maxSpeedMps: 1 + Double(r.byte()) * 3)
    var now: Int64 = 1_760_000_000_000
    guard var trip = try? Trip(id: "F1", route: route, waypoints: waypoints, destination: nil, config: config, now: now) else {
        return 0
    }
    var lastEvent = 0
    let created = trip.created(now: now)
    check(trip, at: now, lastEvent: &lastEvent, events: [created])
    var ts: Int64 = now
    var seq: Int64 = 0
    var steps = 0
    while !r.isAtEnd && steps < 400 {
        steps += 1
        switch r.byte() % 8 {
        case 0, 1, 2:  // a fix near the route
            ts += Int64(r.u16()) - 2000
            seq += Int64(r.byte() % 3)
            let p = point(&r, spread: 0.005 * Double(1 + r.byte() % 8))
            let flags = r.byte()
            let fix = FixInput(
                lat: p.lat, lon: p.lon, ts: ts, seq: flags & 1 == 0 ? seq : nil,
                durationMs: flags & 2 == 0 ? r.wild() * (flags & 4 == 0 ? 1 : -1) : nil,
                speedMps: flags & 8 == 0 ? abs(r.wild()) : nil,
                heading: flags & 16 == 0 ? r.wild() : nil,
                accuracyM: flags & 32 == 0 ? abs(r.wild()) : nil)
            if trip.judge(fix).isApplied {
                let (_, events) = trip.apply(fix, now: now)
                check(trip, at: now, lastEvent: &lastEvent, events: events)
            }
        case 3, 4:  // time passes; the hub ticks
            now += Int64(r.u16() % 20_000)
            let (frame, events) = trip.tick(now: now)
            if let frame {
                precondition(frame.position.lat.isFinite && frame.position.lon.isFinite, "frame not finite")
                if let progress = frame.progress { precondition(progress >= -1e-9 && progress <= 1 + 1e-9, "frame progress \(progress)") }
            }
            check(trip, at: now, lastEvent: &lastEvent, events: events)
        case 5:
            let wasHolding = trip.status == .holding
            do {
                let events = try trip.proceed(now: now)
                precondition(wasHolding, "proceed succeeded while not holding")
                check(trip, at: now, lastEvent: &lastEvent, events: events)
            } catch {
                precondition(!wasHolding, "proceed refused while holding")
            }
        case 6:
            let newPoints = routePoints(&r)
            if let newRoute = try? Route(points: newPoints) {
                var given: [GeoPoint]?
                if r.byte() % 2 == 0 { given = [point(&r, spread: 0.01)] }
                if let events = try? trip.reroute(route: newRoute, waypoints: given, destination: nil, now: now) {
                    check(trip, at: now, lastEvent: &lastEvent, events: events)
                }
            }
        default:
            if r.byte() % 8 == 0 {
                let wasEnded = trip.status == .ended
                let events = trip.end(now: now)
                precondition(!wasEnded || events.isEmpty, "a second end sent events")
                precondition(trip.status == .ended, "end did not end the trip")
                check(trip, at: now, lastEvent: &lastEvent, events: events)
            }
        }
    }
    return 0
}
