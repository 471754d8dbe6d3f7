import Foundation

/// The package's root folder, found from this file's path, for the data the tests read
/// (`data/samples`, `web-client`).
public enum PackageRoot {
    /// `<package>`: this file is `<package>/Sources/TrackHubTesting/PackageRoot.swift`.
    public static var path: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// `<package>/data/samples`: recorded tracks and sample routes.
    public static var samples: String { path + "/data/samples" }

    /// `<package>/web-client`: the static files a test hub serves.
    public static var webClient: String { path + "/web-client" }
}
