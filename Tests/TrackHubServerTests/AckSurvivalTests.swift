import Testing
import TrackHubRedis
@testable import TrackHubServer

/// PROTOCOL 15's table of what an ack survives, row by row, and the settings' parsing.
@Suite struct AckSurvivalTests {
    typealias S = AckSurvival.MasterSettings

    private func survives(_ masters: [S], replicas: Int) -> [String] {
        AckSurvival.Failure.allCases.filter { AckSurvival(masters: masters, replicasRequired: replicas).survives.contains($0) }.map(\.rawValue)
    }

    @Test func eachRowOfTheTable() {
        let noAOF = S(appendOnly: false, appendFsync: "everysec", connectedReplicas: 0)
        let everysec = S(appendOnly: true, appendFsync: "everysec", connectedReplicas: 0)
        let always = S(appendOnly: true, appendFsync: "always", connectedReplicas: 0)
        #expect(survives([noAOF], replicas: 0) == ["hub_crash"])
        #expect(survives([everysec], replicas: 0) == ["hub_crash"])
        #expect(survives([always], replicas: 0) == ["hub_crash", "redis_crash", "power_loss"])
        var replicated = everysec
        replicated.connectedReplicas = 1
        #expect(survives([replicated], replicas: 1) == ["hub_crash", "power_loss", "redis_machine_loss"])
        var both = always
        both.connectedReplicas = 2
        #expect(survives([both], replicas: 2) == ["hub_crash", "redis_crash", "power_loss", "redis_machine_loss"])
    }

    @Test func replicasCountOnlyWhileConnectedAndTheWeakestMasterCounts() {
        let oneReplica = S(appendOnly: true, appendFsync: "always", connectedReplicas: 1)
        #expect(survives([oneReplica], replicas: 2) == ["hub_crash", "redis_crash", "power_loss"])
        #expect(survives([oneReplica], replicas: 0) == ["hub_crash", "redis_crash", "power_loss"])
        let weak = S(appendOnly: nil, appendFsync: nil, connectedReplicas: nil)  // CONFIG refused: the weakest
        #expect(survives([oneReplica, weak], replicas: 1) == ["hub_crash"])
        #expect(survives([], replicas: 1) == ["hub_crash"])
    }

    @Test func syncFullIsRefusedUnlessAnAckSurvivesAPowerLossAndTheLineSaysWhy() {
        let everysec = AckSurvival(masters: [S(appendOnly: true, appendFsync: "everysec", connectedReplicas: 0)], replicasRequired: 0)
        #expect(everysec.syncFullRefusal?.contains("appendfsync always") == true)
        #expect(everysec.logLine.hasPrefix("cluster: an ack survives hub_crash; not redis_crash, power_loss, redis_machine_loss ("))
        #expect(everysec.logLine.contains("appendfsync everysec"))
        let always = AckSurvival(masters: [S(appendOnly: true, appendFsync: "always", connectedReplicas: 0)], replicasRequired: 0)
        #expect(always.syncFullRefusal == nil)
        #expect(always.metrics.map(\.value) == [1, 1, 1, 0])
    }

    @Test func settingsAreParsedFromConfigAndInfoReplies() {
        let replies: [RedisValue] = [
            .array([.string(Array("appendonly".utf8)), .string(Array("yes".utf8))]),
            .array([.string(Array("appendfsync".utf8)), .string(Array("always".utf8))]),
            .string(Array("# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1\r\n".utf8)),
        ]
        #expect(RedisSettingsWatch.parse(replies) == S(appendOnly: true, appendFsync: "always", connectedReplicas: 2))
        let refused: [RedisValue] = [.error("ERR unknown command 'CONFIG'"), .error("ERR unknown command 'CONFIG'"), .string(Array("role:master\r\n".utf8))]
        #expect(RedisSettingsWatch.parse(refused) == S(appendOnly: nil, appendFsync: nil, connectedReplicas: nil))
    }
}
