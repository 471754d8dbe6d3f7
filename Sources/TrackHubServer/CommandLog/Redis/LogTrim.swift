import Foundation
import TrackHubRedis

/// Trimming a partition's log below its snapshots (PROTOCOL 15, "Trimming"), never by length.
///
/// After its owner has written a partition's snapshot, it removes the entries below the
/// **previous** snapshot's position (the one the new snapshot replaces) and below the
/// previous meta snapshot's position of that partition (`ClusterLog.metaFloorKey`), with
/// `XTRIM … MINID` (exact, so a test can see what went; it runs once per snapshot interval).
/// One snapshot of slack, not the latest: a hub that loaded the previous snapshot a moment
/// before may still be replaying the log after it, and a node that started from the previous
/// meta snapshot may still be reading devices and links after its positions. A node behind
/// by a whole interval is out of rotation long before (docs/cluster.md, "Limits").
///
/// A partition with no earlier snapshot, or a cluster without a meta floor yet, is not
/// trimmed at all: the log then grows until the next snapshots, which is what
/// `trackhub_cluster_log_entries` and the 2 000 000-entry warning watch.
enum LogTrim {
    /// The id below which partition `p` may be trimmed: the lower of the replaced snapshot's
    /// position and the meta floor's; nil: not at all (either is missing or the start).
    static func floor(partition p: Int, replacedSnapshot: StreamID, metaFloor: [StreamID]?) -> StreamID? {
        guard let metaFloor, metaFloor.indices.contains(p) else { return nil }
        let floor = min(replacedSnapshot, metaFloor[p])
        return floor > .zero ? floor : nil
    }

    /// `XTRIM <stream> MINID <floor>`: removes the entries whose id is below `floor`.
    static func command(partition p: Int, below floor: StreamID) -> [[UInt8]] {
        [Array(redis: "XTRIM"), Array(redis: ClusterLog.streamKey(p)), Array(redis: "MINID"), Array(redis: floor.description)]
    }

    /// The meta floor in Redis; nil when no meta snapshot has been replaced yet.
    static func readMetaFloor(_ redis: RedisClient) throws -> [StreamID]? {
        guard let bytes = try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.metaFloorKey)]).bytes else { return nil }
        return try JSONDecoder().decode([StreamID].self, from: Data(bytes))
    }

    /// `SET` of the meta floor: the positions of the meta snapshot just replaced.
    static func writeMetaFloorCommand(_ positions: [StreamID]) throws -> [[UInt8]] {
        [Array(redis: "SET"), Array(redis: ClusterLog.metaFloorKey), Array(try JSONEncoder().encode(positions))]
    }
}
