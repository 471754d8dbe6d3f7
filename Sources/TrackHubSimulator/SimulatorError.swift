/// What can go wrong in the simulator before or outside the hub's replies.
public enum SimulatorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `data/samples/` is missing or one of its files is unreadable.
    case badSampleData(String)
    /// A `--replay` file that is not GPX or `ts,lat,lon` CSV, or has fewer than two points.
    case badTrack(String)
    /// The hub could not be reached.
    case connection(String)

    /// One line for the command's error output, prefixed by what failed (`sample data`, `track`, `hub`).
    public var description: String {
        switch self {
        case .badSampleData(let text): "sample data: \(text)"
        case .badTrack(let text): "track: \(text)"
        case .connection(let text): "hub: \(text)"
        }
    }
}
