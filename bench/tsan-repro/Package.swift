// swift-tools-version:6.0
// The reproduction behind scripts/tsan.supp and HubMutex (issue 39): run ./run.sh.
// Sources/TrackHubSync is a symlink to the hub's own, so the lock tested is the one shipped.
import PackageDescription

let package = Package(
    name: "tsan-repro",
    platforms: [.macOS(.v15)],
    targets: [
        .target(name: "TrackHubSync"),
        .executableTarget(name: "repro", dependencies: ["TrackHubSync"]),
    ]
)
