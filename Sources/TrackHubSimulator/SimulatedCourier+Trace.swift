/// Trace riders: a recorded track played at its recorded pace divided by the speedup.
extension SimulatedCourier {
    mutating func sendTracePoint(now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        guard case .trace(let track, _) = kind, var t = trip, t.traceIndex < track.points.count else { return [] }
        let points = track.points
        let i = t.traceIndex
        let offset = points[i].ts - points[0].ts
        let duration = i == 0 ? 0 : min(60_000, Int64((Double(points[i].ts - points[i - 1].ts) / settings.speedup).rounded()))
        t.seq += 1
        t.traceIndex += 1
        if t.traceIndex < points.count {
            t.nextFixAt = t.createdAt + Int64((Double(points[t.traceIndex].ts - points[0].ts) / settings.speedup).rounded())
        }
        trip = t
        let ts = stamp(deviceTs: t.anchorTs + offset, now: now)
        let fix = SimulatedFix(trip: t.id, seq: t.seq, ts: ts, lat: points[i].lat, lon: points[i].lon, durationMs: duration)
        let action = send(fix, stats: &stats)
        if t.traceIndex >= points.count {
            // A looping trace rider pauses at the end like any rider; `--replay` ends the trip
            // as soon as the last fix is acked and exits (docs/simulator.md).
            phase = .atDestination(endAt: isOneReplay ? now : now + wallMs(planRNG.uniform(settings.arrivalDwellS)))
        }
        return [action]
    }
}
