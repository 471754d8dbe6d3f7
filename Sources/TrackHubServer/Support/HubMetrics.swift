import TrackHubProtocol
import TrackHubRouting

/// Counters the hub exposes at `/metrics` (Prometheus text). One per hub, shared by reference
/// by the services of the service thread, which alone touch it; `render` runs there too. Names follow Prometheus: base units (seconds, bytes), counters
/// end in `_total`; docs/operations.md has the full table.
final class HubMetrics {
    var messagesIn = 0
    var fixesIn = 0
    var fixesApplied = 0
    /// Fix batches whose duplicate check had to ask the store (memory of the trip's fixes full).
    var fixStoreLookups = 0
    var acksOut = 0
    /// `cadence` messages and OwnTracks configurations sent (PROTOCOL 18, `CadenceService`).
    var cadenceMessages = 0
    var framesOut = 0
    var segmentsOut = 0
    var eventsOut = 0
    /// Times a sub-tick's writes stopped part-way so the loop could read input first (Hub+Tick).
    var tickYields = 0
    var framesEncoded = 0
    /// HTTP requests refused before the hub ran them, by reason (framing, body timeout, ...).
    var httpRefusals: [String: Int] = [:]
    var errorsOut: [String: Int] = [:]
    /// Fixes from phone apps, by protocol (`osmand`, `owntracks`).
    var deviceFixes: [String: Int] = [:]
    /// Device requests refused, by reason (the error code).
    var deviceRefusals: [String: Int] = [:]
    var httpRequests = 0
    var upgradesRefused = 0
    var storeFailures = 0
    /// Store batches committed on the service thread (the writer idle: `TripStorage.persist`).
    var storeCommitsHere = 0
    /// Store reads that failed (answered `unavailable`, or logged when the answer went out without them).
    var storeReadFailures = 0
    var ticks = 0
    var tickSecondsSum = 0.0
    var tickSecondsMax = 0.0
    var tickSecondsLast = 0.0
    var fleetTicks = 0
    var fleetViewportsComputed = 0
    var fleetMessagesEncoded = 0
    var fleetRebuildSecondsLast = 0.0
    /// One fleet tick from its start (collecting the markers) to its changed answers queued:
    /// above `1 / --fleet-hz` the fleet view falls behind.
    var fleetTick = LatencyHistogramMetric()
    /// A fix received → its ack queued (a hub on its own); observed once per fix, so a batch
    /// of N fixes counts N.
    var fixAck = LatencyHistogramMetric()
    /// A store batch handed to the store → its completion run on the service thread.
    var storeCommit = LatencyHistogramMetric()
    /// PROTOCOL 16: router searches by result (`ok`, `too_far`, `no_path`, `unavailable`,
    /// `failed`) and their time on the router's queue (the search itself).
    var routerSearches: [String: Int] = [:]
    var routerSearch = LatencyHistogramMetric()

    /// Counts one search that never ran: `abandoned` (its client had gone when its turn
    /// came) or `too_late` (it waited longer than the queue's start deadline).
    func routerSkipped(_ skipped: RouterQueue.Skipped) {
        routerSearches[skipped == .abandoned ? "abandoned" : "too_late", default: 0] += 1
    }

    /// Counts one search that ran and observes its time.
    func routerSearched(_ result: Result<FoundRoute, RouterError>, seconds: Double) {
        let label: String
        switch result {
        case .success: label = "ok"
        case .failure(.tooFarFromRoad): label = "too_far"
        case .failure(.noPath): label = "no_path"
        case .failure(.unavailable): label = "unavailable"
        case .failure(.rateLimited): label = "rate_limited"
        case .failure(.failed), .failure(.tooManyPoints): label = "failed"
        }
        routerSearches[label, default: 0] += 1
        routerSearch.observe(ms: Int64((seconds * 1000).rounded(.up)))
    }

    func render(
        trips: Int, movingTrips: Int, draining: Bool, delivery: DeliveryCounters = DeliveryCounters(), subscriptions: Int = 0,
        unsentBytes: Int = 0, commandLog: String = ""
    ) -> String {
        var out = "# HELP trackhub_build_info The running version, as a label; the value is 1.\n# TYPE trackhub_build_info gauge\n"
        out += "trackhub_build_info{version=\"\(TrackHubVersion.current)\"} 1\n"
        out += ProcessMetrics.read()?.render() ?? ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Double) {
            out += PrometheusText.metric(name, type, help, value)
        }
        metric("trackhub_connections", "gauge", "Open WebSocket connections.", Double(delivery.connectionsOpen))
        metric("trackhub_connections_opened_total", "counter", "WebSocket connections accepted.", Double(delivery.connectionsOpened))
        metric("trackhub_subscriptions", "gauge", "Trip subscriptions across all connections.", Double(subscriptions))
        metric("trackhub_trips", "gauge", "Trips held in memory.", Double(trips))
        metric("trackhub_trips_moving", "gauge", "Trips animating now (the tick's work).", Double(movingTrips))
        metric("trackhub_messages_in_total", "counter", "WebSocket messages received.", Double(messagesIn))
        metric("trackhub_fixes_in_total", "counter", "Fixes received (WebSocket and HTTP).", Double(fixesIn))
        metric("trackhub_fixes_applied_total", "counter", "Fixes applied (animated).", Double(fixesApplied))
        metric("trackhub_fix_store_lookups_total", "counter", "Fix batches checked against the store for duplicates memory had forgotten.", Double(fixStoreLookups))
        metric("trackhub_acks_out_total", "counter", "Acks sent after commit.", Double(acksOut))
        metric("trackhub_cadence_messages_total", "counter", "How often couriers were asked for a new fix interval: WebSocket cadence messages and OwnTracks configurations sent.", Double(cadenceMessages))
        metric("trackhub_frames_encoded_total", "counter", "Frames encoded (once per trip per tick, and once per stop followed, PROTOCOL 17).", Double(framesEncoded))
        metric("trackhub_frames_out_total", "counter", "Frames written to subscribers.", Double(framesOut))
        metric("trackhub_segments_out_total", "counter", "Segments written to subscribers.", Double(segmentsOut))
        metric("trackhub_events_out_total", "counter", "Events written to subscribers.", Double(eventsOut))
        metric("trackhub_messages_out_total", "counter", "WebSocket messages written.", Double(delivery.messagesOut))
        metric("trackhub_bytes_out_total", "counter", "WebSocket payload bytes written.", Double(delivery.bytesOut))
        metric("trackhub_tick_yields_total", "counter", "Sub-ticks whose writes stopped part-way so waiting input (fixes, store commits) was handled first.", Double(tickYields))
        metric("trackhub_frames_dropped_total", "counter", "Frames replaced before a slow reader took them (latest-wins).", Double(delivery.framesDropped))
        metric("trackhub_unsent_bytes", "gauge", "Bytes queued for connections and not yet handed to the kernel (slow readers).", Double(unsentBytes))
        metric("trackhub_replies_replaced_total", "counter", "Snapshots and viewport answers that replaced an unsent one of the same trip or viewport.", Double(delivery.repliesReplaced))
        metric("trackhub_slow_consumer_closes_total", "counter", "Connections closed with 1008 for unsent data over the limit.", Double(delivery.slowConsumerCloses))
        metric("trackhub_unsent_cap_closes_total", "counter", "Connections closed with 1008 at once for unsent data over 4 x the limit.", Double(delivery.unsentCapCloses))
        metric("trackhub_http_requests_total", "counter", "HTTP requests answered.", Double(httpRequests))
        metric("trackhub_upgrades_refused_total", "counter", "WebSocket upgrades refused.", Double(upgradesRefused))
        metric("trackhub_store_failures_total", "counter", "Store batches that failed to commit.", Double(storeFailures))
        metric("trackhub_store_commits_here_total", "counter", "Store batches committed on the service thread while the store's writer was idle (no hand-off).", Double(storeCommitsHere))
        metric("trackhub_store_read_failures_total", "counter", "Store reads that failed.", Double(storeReadFailures))
        out += commandLog  // the cluster's gauges and counters (RedisCommandLog)
        out += fixAck.render("trackhub_fix_ack_seconds", help: "From a fix's arrival to its ack being queued (store commit included).")
        out += storeCommit.render("trackhub_store_commit_seconds", help: "From a batch handed to the store to its completion on the service thread.")
        out += PrometheusText.counters("trackhub_errors_out_total", "Error replies sent, by code.", label: "code", errorsOut)
        var byProtocol = deviceFixes
        for source in ["osmand", "owntracks"] where byProtocol[source] == nil { byProtocol[source] = 0 }
        out += PrometheusText.counters("trackhub_device_fixes_total", "Fixes from phone apps, by protocol.", label: "protocol", byProtocol)
        out += PrometheusText.counters("trackhub_device_refused_total", "Device requests refused, by reason (error code).", label: "reason", deviceRefusals)
        out += PrometheusText.counters("trackhub_router_searches_total", "Router searches (PROTOCOL 16), by result.", label: "result", routerSearches)
        out += routerSearch.render("trackhub_router_search_seconds", help: "Time of one router search, on the router's queue.")
        out += PrometheusText.counters("trackhub_http_refused_total", "HTTP requests refused before they ran, by reason.", label: "reason", httpRefusals)
        out += "# HELP trackhub_tick_duration_seconds Time to compute, encode and queue one tick.\n# TYPE trackhub_tick_duration_seconds summary\n"
        out += "trackhub_tick_duration_seconds_sum \(PrometheusText.format(tickSecondsSum))\ntrackhub_tick_duration_seconds_count \(ticks)\n"
        metric("trackhub_tick_duration_seconds_max", "gauge", "Longest tick so far.", tickSecondsMax)
        metric("trackhub_tick_duration_seconds_last", "gauge", "The last tick.", tickSecondsLast)
        metric("trackhub_fleet_ticks_total", "counter", "Fleet index rebuilds.", Double(fleetTicks))
        metric("trackhub_fleet_viewports_computed_total", "counter", "Viewport answers computed (once per distinct viewport per fleet tick).", Double(fleetViewportsComputed))
        metric("trackhub_fleet_messages_encoded_total", "counter", "clusters messages encoded.", Double(fleetMessagesEncoded))
        metric("trackhub_fleet_rebuild_seconds_last", "gauge", "The last fleet index rebuild.", fleetRebuildSecondsLast)
        out += fleetTick.render("trackhub_fleet_tick_seconds", help: "One fleet tick: collecting the markers, building the index, answering the viewports, queueing what changed.")
        metric("trackhub_draining", "gauge", "1 after SIGTERM while the hub drains.", draining ? 1 : 0)
        return out
    }
}

/// The Prometheus text format, one metric at a time.
enum PrometheusText {
    /// `# HELP`, `# TYPE` and the value of one unlabelled metric.
    static func metric(_ name: String, _ type: String, _ help: String, _ value: Double) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(format(value))\n"
    }

    /// A counter with one label, a line per value of the label, in the label's order.
    static func counters(_ name: String, _ help: String, label: String, _ counts: [String: Int]) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for (value, count) in counts.sorted(by: { $0.key < $1.key }) {
            out += "\(name){\(label)=\"\(value)\"} \(count)\n"
        }
        return out
    }

    /// A gauge with one label, a line per value of the label, in the order given.
    static func gauges(_ name: String, _ help: String, label: String, _ values: [(String, Double)]) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        for (value, gauge) in values {
            out += "\(name){\(label)=\"\(value)\"} \(format(gauge))\n"
        }
        return out
    }

    /// An integral value without a fraction, others as Swift prints them.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
