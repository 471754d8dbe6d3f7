import Testing
@testable import TrackHubSimulator

/// The status line `trackhub simulate` (and so the run command) shows.
@Suite struct StatusLineTests {
    static func stats(riders: Int, sent: Int, applied: Int) -> SimulationStats {
        var stats = SimulationStats()
        stats.riders = riders
        stats.fixesSent = sent
        stats.fixesApplied = applied
        return stats
    }

    @Test func theRateCountsTheFixesSentSinceThePreviousLine() {
        var line = StatusLine(startMs: 10_000)
        #expect(line.render(Self.stats(riders: 12, sent: 30, applied: 28), nowMs: 12_000)
            == "riders 12 · fixes 30 (acked 28) · 15.0 fixes/s · events 0 · trips ended 0")
        // The next second's rate is that second's alone.
        #expect(line.render(Self.stats(riders: 12, sent: 35, applied: 35), nowMs: 13_000, viewers: 2)
            == "riders 12 · fixes 35 (acked 35) · 5.0 fixes/s · events 0 · trips ended 0 · viewers 2")
        // A second line in the same millisecond divides by nothing: no rate, and the basis stays.
        #expect(line.render(Self.stats(riders: 12, sent: 35, applied: 35), nowMs: 13_000).contains(" 0.0 fixes/s"))
        #expect(line.render(Self.stats(riders: 12, sent: 45, applied: 40), nowMs: 14_000).contains(" 10.0 fixes/s"))
    }

    @Test func refusalsAndErrorsShowOnlyWhenThereAreAny() {
        var stats = Self.stats(riders: 1, sent: 3, applied: 2)
        var line = StatusLine(startMs: 0)
        #expect(!line.render(stats, nowMs: 1000).contains("refused"))
        stats.refusals["outlier"] = 1
        stats.errors = 2
        let text = line.render(stats, nowMs: 2000)
        #expect(text.contains("fixes 3 (acked 3)"))
        #expect(text.hasSuffix(" · refused 1 · errors 2"))
    }

    @Test func viewersAreTheHubsConnectionsGauge() {
        let metrics = """
        # HELP trackhub_connections Open WebSocket connections.
        # TYPE trackhub_connections gauge
        trackhub_connections 14
        trackhub_connections_opened_total 20
        """
        #expect(HubViewers.connections(inMetrics: metrics) == 14)
        #expect(HubViewers.connections(inMetrics: "trackhub_connections_opened_total 3\n") == nil)
    }
}
