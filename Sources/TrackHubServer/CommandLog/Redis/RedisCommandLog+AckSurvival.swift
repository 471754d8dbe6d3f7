import TrackHubCore
import TrackHubProtocol

/// What an ack survives in cluster mode (PROTOCOL 15): the settings' readings (logged once per
/// change, exported in `/metrics`), `--sync full` refusing commands while an ack would not
/// survive a power cut, and `--cluster-replicas N` holding answers until the entry is on N
/// replicas.
extension RedisCommandLog {
    /// A reading of the Redis settings (`RedisSettingsWatch`): logged when what an ack
    /// survives, or the settings behind it, changed.
    func ackSurvivalRead(_ survival: AckSurvival) {
        let previous = state.ackSurvival
        state.ackSurvival = survival
        guard previous?.logLine != survival.logLine else { return }
        if survival.survives.contains(.redisCrash) && survival.survives.contains(.redisMachineLoss) {
            HubLog.info(survival.logLine)
        } else {
            logWarning(survival.logLine)
        }
        if services.config.syncFull, let refusal = survival.syncFullRefusal { logWarning("\(refusal); commands are answered unavailable until then") }
    }

    /// Why commands are refused under `--sync full` now, or nil (not `--sync full`, or an ack
    /// survives a power cut). Before the first reading: refused (nothing is known yet).
    var syncFullRefusal: String? {
        guard services.config.syncFull else { return nil }
        guard let survival = state.ackSurvival else { return "--sync full: the Redis settings have not been read yet" }
        return survival.syncFullRefusal
    }

    /// `trackhub_cluster_ack_survives{event}`: 1 or 0 per failure, as the last reading says
    /// (before it: a hub crash only).
    var ackSurvivalMetrics: String {
        let survival = state.ackSurvival ?? AckSurvival(masters: [], replicasRequired: services.config.clusterReplicas)
        return PrometheusText.gauges(
            "trackhub_cluster_ack_survives", "1 when an acked command survives this failure with the cluster log's Redis settings as last read (PROTOCOL 15).",
            label: "event", survival.metrics.map { ($0.event, $0.value) })
    }

    /// The writer's word on a command's entry: on as many replicas as `--cluster-replicas`
    /// asks. Its answer, if this node already applied the entry, goes out now.
    func entryConfirmed(_ request: Int64) {
        guard state.pending[request] != nil else { return }
        state.pending[request]?.confirmed = true
        if state.pending[request]?.answer != nil, case .webSocket(let connection, _)? = state.pending[request]?.reply {
            flushPendingAnswers(of: connection)
        } else if let answer = state.pending[request]?.answer {
            state.pending[request] = nil
            answer()
        }
    }
}
