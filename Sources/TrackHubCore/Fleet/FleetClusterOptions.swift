/// The parameters of hierarchical greedy clustering; the defaults are supercluster's
/// and PROTOCOL section 8's.
public struct FleetClusterOptions: Sendable, Hashable {
    /// The cluster radius in pixels of a tile.
    public var radius: Double
    /// The tile extent in pixels (the radius is relative to it).
    public var extent: Double
    /// The fewest riders that make a cluster (at least 2).
    public var minPoints: Int
    /// The highest zoom at which riders are clustered; above it every rider stands alone.
    public var maxZoom: Int
    /// The lowest zoom that has its own level; lower zooms use this one.
    public var minZoom: Int

    /// Makes options; values out of range are clamped (`minPoints` ≥ 2,
    /// 0 ≤ `minZoom` ≤ `maxZoom` ≤ 30, `radius` and `extent` positive).
    public init(
        radius: Double = 40, extent: Double = 512, minPoints: Int = 2,
        maxZoom: Int = 16, minZoom: Int = 0
    ) {
        self.radius = radius.isFinite && radius > 0 ? radius : 40
        self.extent = extent.isFinite && extent > 0 ? extent : 512
        self.minPoints = max(2, minPoints)
        self.maxZoom = min(max(maxZoom, 0), 30)
        self.minZoom = min(max(minZoom, 0), self.maxZoom)
    }

    /// Supercluster's defaults: radius 40 px, extent 512, 2 points, zooms 0–16.
    public static let standard = FleetClusterOptions()
}
