import Foundation

/// What the main thread observed around the run: the hub's process and `/metrics`, and the
/// generator's own process, at the start and at the two ends of the measured window.
struct RunObservations {
    var hubBefore: ProcessSample?
    var hubWindowStart: ProcessSample?
    var hubWindowEnd: ProcessSample?
    var selfWindowStart: ProcessSample?
    var selfWindowEnd: ProcessSample?
    var metricsBefore: [String: Double]?
    var metricsAfter: [String: Double]?
    var windowSeconds = 0.0
    var machineWindowStart: MachineSample?
    var machineWindowEnd: MachineSample?
}

/// The end of a run: a table for people (stderr) and one JSON line for scripts (stdout).
struct RunReport {
    let options: LoadOptions
    let counters: LoadCounters
    let observed: RunObservations
    let planned: Int

    private func rate(_ n: Int) -> Double {
        observed.windowSeconds > 0 ? (Double(n) / observed.windowSeconds * 10).rounded() / 10 : 0
    }

    private func percentiles(_ h: LatencyHistogram) -> SummaryJSON {
        .object([
            ("p50", .ms(h.quantileMs(0.5))), ("p90", .ms(h.quantileMs(0.9))), ("p99", .ms(h.quantileMs(0.99))),
            ("max", .ms(h.maxMs)), ("mean", .ms(h.meanMs)), ("samples", .int(Int(h.count))),
        ])
    }

    private var hubMetricsDelta: [(String, SummaryJSON)] {
        guard let before = observed.metricsBefore, let after = observed.metricsAfter else { return [] }
        let names = [
            ("fixes_in", "trackhub_fixes_in_total"), ("acks_out", "trackhub_acks_out_total"),
            ("frames_out", "trackhub_frames_out_total"), ("frames_dropped", "trackhub_frames_dropped_total"),
            ("segments_out", "trackhub_segments_out_total"), ("events_out", "trackhub_events_out_total"),
            ("messages_out", "trackhub_messages_out_total"), ("bytes_out", "trackhub_bytes_out_total"),
            ("slow_consumer_closes", "trackhub_slow_consumer_closes_total"),
            ("upgrades_refused", "trackhub_upgrades_refused_total"),
            ("connections_opened", "trackhub_connections_opened_total"),
        ]
        return names.map { key, metric in (key, .int(Int((after[metric] ?? 0) - (before[metric] ?? 0)))) }
    }

    private var hubJSON: SummaryJSON {
        var fields: [(String, SummaryJSON)] = []
        if let a = observed.hubWindowStart, let b = observed.hubWindowEnd {
            fields.append(("cpu_pct", .number((ProcessProbe.cpuPercent(a, b) * 10).rounded() / 10)))
            fields.append(("rss_mb", .number((Double(b.rssBytes) / 1_048_576 * 10).rounded() / 10)))
            if let start = observed.hubBefore {
                fields.append(("rss_start_mb", .number((Double(start.rssBytes) / 1_048_576 * 10).rounded() / 10)))
                let open = max(1, counters.openAtWindowEnd)
                fields.append(("rss_per_connection_kb", .number((Double(b.rssBytes - start.rssBytes) / 1024 / Double(open) * 100).rounded() / 100)))
            }
        }
        let delta = hubMetricsDelta
        if !delta.isEmpty { fields.append(("metrics", .object(delta))) }
        return .object(fields)
    }

    private var generatorJSON: SummaryJSON {
        guard let a = observed.selfWindowStart, let b = observed.selfWindowEnd else { return .object([]) }
        return .object([
            ("cpu_pct", .number((ProcessProbe.cpuPercent(a, b) * 10).rounded() / 10)),
            ("rss_mb", .number((Double(b.rssBytes) / 1_048_576 * 10).rounded() / 10)),
        ])
    }

    /// The machine during the window: busy share of all cores, and what processes other
    /// than the hub and this generator took (in percent of one core).
    private var machineJSON: SummaryJSON {
        guard let a = observed.machineWindowStart, let b = observed.machineWindowEnd else { return .object([]) }
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let busy = MachineSample.busyPercent(a, b)
        var own = 0.0
        if let s = observed.selfWindowStart, let e = observed.selfWindowEnd { own += ProcessProbe.cpuPercent(s, e) }
        if let s = observed.hubWindowStart, let e = observed.hubWindowEnd { own += ProcessProbe.cpuPercent(s, e) }
        return .object([
            ("cores", .int(Int(cores))),
            ("busy_pct", .number((busy * 10).rounded() / 10)),
            ("others_cpu_pct", .number((max(0, busy * cores - own) * 10).rounded() / 10)),
        ])
    }

    var json: SummaryJSON {
        let c = counters
        var fields: [(String, SummaryJSON)] = [
            ("target", .string(options.target.rawValue)),
            ("connections", .int(max(0, c.openAtWindowEnd))),
            ("connections_planned", .int(planned)),
            ("connections_peak", .int(c.peakOpen)),
            ("duration_s", .number((observed.windowSeconds * 100).rounded() / 100)),
            ("couriers", .int(options.couriers)), ("viewers", .int(options.viewers)),
            ("fleet_viewers", .int(options.fleetViewers)), ("idle_connections", .int(options.idleConnections)),
            ("fixes_sent", .int(c.fixesSent)),
            ("acks", .int(options.target == .nchan ? c.publishReplies : c.acks)),
            ("acks_applied", .int(c.acksApplied)),
            ("frames_received", .int(c.frames)),
            ("viewer_frames", .int(c.viewerFrames)),
            ("segments_received", .int(c.segments)),
            ("clusters_received", .int(c.clusters)),
            ("events_received", .int(c.events)),
            ("cadence_received", .int(c.cadences)),
            ("stop_link_viewers", .int(c.stopLinkViewers)),
            ("stop_messages_received", .int(c.stopMessages)),
            ("stop_link_frames", .int(c.stopLinkFrames)),
            ("fixes_per_s", .number(rate(c.windowFixes))),
            ("acks_per_s", .number(rate(c.windowAcks))),
            ("frames_per_s", .number(rate(c.windowFrames))),
            ("viewer_frames_per_s", .number(rate(c.windowViewerFrames))),
            ("segments_per_s", .number(rate(c.windowSegments))),
            ("clusters_per_s", .number(rate(c.windowClusters))),
            ("mbytes_per_s", .number((rate(c.windowBytes) / 1_048_576 * 100).rounded() / 100)),
            ("latency_ms", percentiles(c.fixToFrame)),
            ("segment_latency_ms", percentiles(c.fixToSegment)),
            ("ack_latency_ms", percentiles(c.ackLatency)),
            ("delivery_ms", percentiles(c.delivery)),
            ("clusters_delay_ms", percentiles(c.clustersDelay)),
            ("viewport_reply_ms", percentiles(c.viewportReply)),
            ("errors", .int(c.errors)),
            ("error_detail", .object([
                ("refused", .int(c.refused)), ("dropped", .int(c.dropped)),
                ("error_replies", .object(c.errorReplies.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
                ("http_failures", .int(c.httpFailures)), ("unacked", .int(c.unackedAtEnd)),
                ("close_reasons", .object(c.closeReasons.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            ])),
            ("reconnects", .int(c.reconnects)),
            ("latency_lost", .int(c.latencyLost)),
            ("ended_missing", .int(max(0, c.endedMissing == Int.max ? 0 : c.endedMissing))),
            ("hub", hubJSON),
            ("generator", generatorJSON),
            ("machine", machineJSON),
        ]
        if options.shardCount > 1 {
            // For the parent of --processes: the raw histograms, to merge exactly.
            func raw(_ h: LatencyHistogram) -> SummaryJSON {
                .object([("buckets", .array(h.sparse.map { .array($0.map { .int($0) }) })), ("max_us", .int(Int(h.maxMicros))), ("sum_us", .number(h.sumMicros))])
            }
            fields.append(("histograms", .object([
                ("latency_ms", raw(c.fixToFrame)), ("segment_latency_ms", raw(c.fixToSegment)),
                ("ack_latency_ms", raw(c.ackLatency)), ("delivery_ms", raw(c.delivery)),
                ("clusters_delay_ms", raw(c.clustersDelay)), ("viewport_reply_ms", raw(c.viewportReply)),
            ])))
            fields.append(("window", .object([("fixes", .int(c.windowFixes)), ("acks", .int(c.windowAcks)), ("frames", .int(c.windowFrames)), ("viewer_frames", .int(c.windowViewerFrames)), ("segments", .int(c.windowSegments)), ("clusters", .int(c.windowClusters)), ("bytes", .int(c.windowBytes))])))
        }
        return .object(fields)
    }

    /// The table for people.
    var table: String {
        let c = counters
        func row(_ name: String, _ value: String) -> String { name.padding(toLength: 30, withPad: " ", startingAt: 0) + value + "\n" }
        func lat(_ h: LatencyHistogram) -> String {
            guard h.count > 0 else { return "–" }
            return String(format: "p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms  (%d samples)",
                          h.quantileMs(0.5) ?? 0, h.quantileMs(0.9) ?? 0, h.quantileMs(0.99) ?? 0, h.maxMs ?? 0, Int(h.count))
        }
        var out = "\n== trackhub-load: \(options.target.rawValue) at \(options.url), window \(String(format: "%.1f", observed.windowSeconds)) s ==\n"
        out += row("connections (open / planned)", "\(max(0, c.openAtWindowEnd)) / \(planned)  (peak \(c.peakOpen), reconnects \(c.reconnects))")
        out += row("fixes sent / acks", "\(c.fixesSent) / \(options.target == .nchan ? c.publishReplies : c.acks)  (\(rate(c.windowFixes))/s, \(rate(c.windowAcks))/s)")
        out += row("frames received", "\(c.frames)  (\(rate(c.windowFrames))/s; viewers \(rate(c.windowViewerFrames))/s)")
        if c.segments > 0 { out += row("segments received", "\(c.segments)  (\(rate(c.windowSegments))/s)") }
        if c.stopLinkViewers > 0 {
            out += row("stop-link viewers", "\(c.stopLinkViewers)  (stop messages \(c.stopMessages); frames and segments while shown \(c.stopLinkFrames))")
        }
        if c.clusters > 0 { out += row("clusters received", "\(c.clusters)  (\(rate(c.windowClusters))/s)") }
        out += row(options.target == .nchan ? "publish → receive" : "fix → first frame", lat(c.fixToFrame))
        if c.fixToSegment.count > 0 { out += row("fix → segment", lat(c.fixToSegment)) }
        if c.ackLatency.count > 0 { out += row("fix → ack", lat(c.ackLatency)) }
        out += row("frame t → received", lat(c.delivery))
        if c.clustersDelay.count > 0 { out += row("clusters t → received", lat(c.clustersDelay)) }
        if c.viewportReply.count > 0 { out += row("viewport → clusters reply", lat(c.viewportReply)) }
        out += row("errors", "\(c.errors)  (refused \(c.refused), dropped \(c.dropped), error replies \(c.errorReplyTotal), http \(c.httpFailures), unacked \(c.unackedAtEnd))")
        if let a = observed.hubWindowStart, let b = observed.hubWindowEnd {
            var hub = String(format: "cpu %.0f%%  rss %.1f MB", ProcessProbe.cpuPercent(a, b), Double(b.rssBytes) / 1_048_576)
            if let start = observed.hubBefore {
                hub += String(format: "  (%.2f KB per connection)", Double(b.rssBytes - start.rssBytes) / 1024 / Double(max(1, c.openAtWindowEnd)))
            }
            out += row("hub", hub)
        }
        if case .object(let m) = machineJSON, m.count == 3, case .number(let busy) = m[1].1, case .number(let others) = m[2].1 {
            out += row("machine", String(format: "%.0f%% of all cores busy; other processes %.0f%% of a core", busy, others))
        }
        if let a = observed.selfWindowStart, let b = observed.selfWindowEnd {
            out += row("generator", String(format: "cpu %.0f%%  rss %.1f MB", ProcessProbe.cpuPercent(a, b), Double(b.rssBytes) / 1_048_576))
        }
        return out
    }
}
