import TrackHubCore

/// A recorded GPS track: points with the device's timestamps, in time order.
public struct RecordedTrack: Sendable, Equatable {
    /// One recorded fix.
    public struct Point: Sendable, Equatable {
        /// Milliseconds since the Unix epoch, as recorded.
        public var ts: Int64
        /// Latitude in degrees.
        public var lat: Double
        /// Longitude in degrees.
        public var lon: Double

        /// A point as recorded; nothing is checked.
        public init(ts: Int64, lat: Double, lon: Double) {
            self.ts = ts
            self.lat = lat
            self.lon = lon
        }
    }

    /// A short name (the file name) for the trip's rider.
    public var name: String
    /// The points, `ts` strictly increasing.
    public var points: [Point]

    /// A track from points already in time order (not checked; `TrackReader` drops a file's
    /// points that go back in time).
    public init(name: String, points: [Point]) {
        self.name = name
        self.points = points
    }

    /// Recorded time from the first to the last point, milliseconds.
    public var spanMs: Int64 { (points.last?.ts ?? 0) - (points.first?.ts ?? 0) }
}
