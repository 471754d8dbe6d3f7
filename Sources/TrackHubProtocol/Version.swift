/// The one place the version is written: `trackhub --version`, the `server` of `welcome`
/// and `/healthz`, and `trackhub_build_info{version}` all read it.
public enum TrackHubVersion {
    /// The release version, semantic versioning without a `v`.
    public static let current = "0.1.0"
    /// `trackhub/0.1.0`, the hub's name in `welcome` (PROTOCOL 4).
    public static let serverName = "trackhub/\(current)"
}
