import Testing
import TrackHubProtocol
@testable import TrackHubServer

/// /metrics as PROTOCOL 14 wants it: build info, process_*, seconds, counters ending _total.
@Suite struct MetricsNamingTests {
    static func rendered() -> String {
        let metrics = HubMetrics()
        metrics.fixAck.observe(ms: 3, count: 4)
        let cluster = RedisCommandLog.metricsText(up: true, lagMs: 1500, counters: .init())
        return metrics.render(trips: 0, movingTrips: 0, draining: false, commandLog: cluster)
    }

    @Test func buildInfoCarriesTheVersion() {
        #expect(Self.rendered().contains("trackhub_build_info{version=\"\(TrackHubVersion.current)\"} 1\n"))
    }

    @Test func aBatchOfFixesCountsEachFix() {
        let text = Self.rendered()
        #expect(text.contains("trackhub_fix_ack_seconds_count 4\n"))
        #expect(text.contains("trackhub_fix_ack_seconds_sum 0.012\n"))
        #expect(text.contains("trackhub_fix_ack_seconds_bucket{le=\"0.005\"} 4\n"))
    }

    @Test func clusterLagIsInSeconds() {
        let text = Self.rendered()
        #expect(text.contains("trackhub_cluster_lag_seconds 1.5\n"))
        #expect(!text.contains("_ms"))
    }

    @Test func everyCounterEndsInTotalAndNoNameHasAMillisecondUnit() {
        let text = Self.rendered()
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            let (name, type) = (parts[2], parts[3])
            if type == "counter" { #expect(name.hasSuffix("_total"), "\(name)") }
            #expect(!name.hasSuffix("_ms") && !name.contains("_ms_"), "\(name)")
        }
    }

    @Test func processMetricsAreReadFromProc() throws {
        #if os(Linux)
        let process = try #require(ProcessMetrics.read())
        #expect(process.residentBytes > 0)
        #expect(process.openFDs > 0)
        #expect(process.startTimeSeconds > 1_000_000_000)
        #expect(Self.rendered().contains("\nprocess_open_fds "))
        #endif
    }

    @Test func statFieldsSurviveAParenthesisInTheName() throws {
        let fields = try #require(ProcessMetrics.statFields("42 (a) b) S 1 2 3 4 5 6 7 8 9 10 11 12 13"))
        #expect(fields.first == "S")
        #expect(fields[11] == "11")  // field 14, utime
        #expect(ProcessMetrics.bootTime("cpu 1 2\nbtime 1700000000\nprocesses 9\n") == 1_700_000_000)
    }
}
