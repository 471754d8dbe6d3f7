import TrackHubProtocol

/// Adds up the JSON summaries of `--processes` shards into one report: counts are summed,
/// latency histograms merged bucket by bucket (so percentiles stay exact), the hub's
/// figures taken from the first shard (every shard watched the same hub).
enum FanoutMerge {
    struct Merged {
        var table: String
        var json: String
        var errors: Int
    }

    static func merge(_ lines: [String], options: LoadOptions) -> Merged? {
        var total = LoadCounters()
        var planned = 0
        var seconds = 0.0
        var hub: SummaryJSON?
        var hubFramesOut = -1
        var machine: SummaryJSON?
        var generatorCPU = 0.0
        var generatorRSS = 0.0
        for line in lines {
            guard let value = try? JSONParser(maxDepth: 64).parse(line), value["fixes_sent"] != nil else { return nil }
            func int(_ v: JSONValue?) -> Int { Int(v?.doubleValue ?? 0) }
            total.fixesSent += int(value["fixes_sent"])
            if options.target == .nchan { total.publishReplies += int(value["acks"]) } else { total.acks += int(value["acks"]) }
            total.acksApplied += int(value["acks_applied"])
            total.frames += int(value["frames_received"])
            total.viewerFrames += int(value["viewer_frames"])
            total.segments += int(value["segments_received"])
            total.clusters += int(value["clusters_received"])
            total.events += int(value["events_received"])
            total.cadences += int(value["cadence_received"])
            total.stopLinkViewers += int(value["stop_link_viewers"])
            total.stopMessages += int(value["stop_messages_received"])
            total.stopLinkFrames += int(value["stop_link_frames"])
            total.openAtWindowEnd = max(0, total.openAtWindowEnd) + int(value["connections"])
            total.peakOpen += int(value["connections_peak"])
            total.reconnects += int(value["reconnects"])
            total.latencyLost += int(value["latency_lost"])
            planned += int(value["connections_planned"])
            seconds = max(seconds, value["duration_s"]?.doubleValue ?? 0)
            let detail = value["error_detail"]
            total.refused += int(detail?["refused"])
            total.dropped += int(detail?["dropped"])
            total.httpFailures += int(detail?["http_failures"])
            total.unackedAtEnd += int(detail?["unacked"])
            for (code, n) in detail?["error_replies"]?.objectValue?.entries ?? [] { total.errorReplies[code, default: 0] += int(n) }
            let window = value["window"]
            total.windowFixes += int(window?["fixes"])
            total.windowAcks += int(window?["acks"])
            total.windowFrames += int(window?["frames"])
            total.windowViewerFrames += int(window?["viewer_frames"])
            total.windowSegments += int(window?["segments"])
            total.windowClusters += int(window?["clusters"])
            total.windowBytes += int(window?["bytes"])
            let histograms = value["histograms"]
            func histogram(_ name: String) -> LatencyHistogram {
                let h = histograms?[name]
                let buckets = (h?["buckets"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).map { int($0) } }
                return LatencyHistogram(sparse: buckets, maxMicros: Int64(int(h?["max_us"])), sumMicros: h?["sum_us"]?.doubleValue ?? 0)
            }
            total.fixToFrame.merge(histogram("latency_ms"))
            total.fixToSegment.merge(histogram("segment_latency_ms"))
            total.ackLatency.merge(histogram("ack_latency_ms"))
            total.delivery.merge(histogram("delivery_ms"))
            total.clustersDelay.merge(histogram("clusters_delay_ms"))
            total.viewportReply.merge(histogram("viewport_reply_ms"))
            // The hub's figures of the shard that read them last: its counters only grow, so
            // the one with the most frames out. A shard that finished first read them before
            // the other shards' last frames (the two-process test saw 921 against 922).
            if let h = value["hub"], int(h["metrics"]?["frames_out"]) >= hubFramesOut {
                hub = convert(h)
                hubFramesOut = int(h["metrics"]?["frames_out"])
            }
            if machine == nil, let m = value["machine"] { machine = convert(m) }
            generatorCPU += value["generator"]?["cpu_pct"]?.doubleValue ?? 0
            generatorRSS += value["generator"]?["rss_mb"]?.doubleValue ?? 0
        }
        var single = options
        single.shardCount = 1
        var observed = RunObservations()
        observed.windowSeconds = seconds
        let report = RunReport(options: single, counters: total, observed: observed, planned: planned)
        guard case .object(var fields) = report.json else { return nil }
        for i in fields.indices {
            if fields[i].0 == "hub", case .object(var h)? = hub {
                // Memory per connection over all shards' connections, not one shard's.
                let rss = h.first { $0.0 == "rss_mb" }?.1, start = h.first { $0.0 == "rss_start_mb" }?.1
                if case .number(let end)? = rss, case .number(let begin)? = start, let k = h.firstIndex(where: { $0.0 == "rss_per_connection_kb" }) {
                    h[k].1 = .number(((end - begin) * 1024 / Double(max(1, total.openAtWindowEnd)) * 100).rounded() / 100)
                }
                fields[i].1 = .object(h)
                hub = .object(h)
            }
            if fields[i].0 == "machine", let machine { fields[i].1 = machine }
            if fields[i].0 == "generator" {
                fields[i].1 = .object([("cpu_pct", .number(generatorCPU)), ("rss_mb", .number(generatorRSS)), ("processes", .int(lines.count))])
            }
        }
        var table = report.table
        table += "(merged from \(lines.count) generator processes; generator cpu \(Int(generatorCPU))% in all; hub figures: \(hub.map { SummaryJSON.object([("hub", $0)]).text } ?? "–"))\n"
        return Merged(table: table, json: SummaryJSON.object(fields).text, errors: total.errors)
    }

    private static func convert(_ value: JSONValue) -> SummaryJSON {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n.value)
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(convert))
        case .object(let object): return .object(object.entries.map { ($0.key, convert($0.value)) })
        }
    }
}
