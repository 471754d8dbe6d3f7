import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// What the fleet channel holds between ticks (PROTOCOL section 8): the last index built,
/// the cadence, and the connections grouped by the viewport they watch. `FleetService`'s.
struct FleetState {
    /// Connections watching one normalised viewport.
    struct Group {
        var viewport: Viewport
        var members: Set<ConnectionID> = []
        /// The answer last sent (without `t`), to tell whether it changed.
        var lastBody: [UInt8]?
    }

    var index: FleetIndex?
    var indexTime: Int64 = 0
    /// When the last fleet tick was due (the cadence; 0: none yet).
    var lastTickDue: Int64 = 0
    var buildInFlight = false
    var groups: [String: Group] = [:]
}
