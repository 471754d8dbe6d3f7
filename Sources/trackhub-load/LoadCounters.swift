/// What the generator counted. Owned by the service thread while the run goes; read by the
/// main thread once the loop has stopped.
struct LoadCounters {
    // Connections.
    var attempted = 0
    var opened = 0
    var open = 0
    var peakOpen = 0
    var openAtWindowEnd = -1
    var refused = 0
    var dropped = 0
    var reconnects = 0
    var closeReasons: [String: Int] = [:]
    // Couriers.
    var fixesSent = 0
    var acks = 0
    var acksApplied = 0
    var acksNotApplied = 0
    // Receiving.
    var messages = 0
    var bytes = 0
    var frames = 0
    var viewerFrames = 0
    var segments = 0
    var snapshots = 0
    /// `cadence` messages couriers received (PROTOCOL 18).
    var cadences = 0
    var events = 0
    /// `--stop-link-share`: viewers on stop links, the `stop` messages they got, and the frames
    /// and segments they got (only while the courier was shown to them).
    var stopLinkViewers = 0
    var stopMessages = 0
    var stopLinkFrames = 0
    var clusters = 0
    var publishReplies = 0
    var errorReplies: [String: Int] = [:]
    var latencyLost = 0
    var httpFailures = 0
    var unackedAtEnd = 0
    var endedMissing = 0
    // The measured window.
    var windowFixes = 0
    var windowAcks = 0
    var windowFrames = 0
    var windowViewerFrames = 0
    var windowSegments = 0
    var windowClusters = 0
    var windowBytes = 0
    // Latencies (microseconds).
    var fixToFrame = LatencyHistogram()
    var fixToSegment = LatencyHistogram()
    var ackLatency = LatencyHistogram()
    var delivery = LatencyHistogram()
    var clustersDelay = LatencyHistogram()
    var viewportReply = LatencyHistogram()

    var errorReplyTotal: Int { errorReplies.values.reduce(0, +) }

    /// Everything that counts against `--max-errors`.
    var errors: Int { refused + dropped + errorReplyTotal + httpFailures + unackedAtEnd }
}
