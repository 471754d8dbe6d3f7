// swift-tools-version:6.0
import PackageDescription

// Layers, from the bottom up:
//   TrackHubSync      `HubMutex`, the one lock type: `Mutex` plus the edges ThreadSanitizer
//                     cannot see (scripts/tsan.sh); depends on nothing
//   TrackHubCore      pure Swift, no I/O, no C: geodesy, routes, animation, trips, fleet clustering
//   TrackHubProtocol  the wire format of PROTOCOL.md: JSON parsing, validation, message encoding,
//                     and `ServerMessage`, the one reader of the hub's messages (simulator, load, tests)
//   TrackHubStore     where fixes, trips and events are kept (in memory; SQLite)
//   TrackHubRedis     a blocking Redis connection (hiredis), for cluster mode's shared log
//   TrackHubRouting   the routes the hub finds (PROTOCOL 16): the `Router` interface, its Routino
//                     backend (libroutino), the one queue searches run on
//   TrackHubLWS       all of libwebsockets: the server host (context, callbacks, HTTP exchange,
//                     WebSocket I/O) and the client host; the types the hub and the host pass
//   TrackHubCrypto    HMAC-SHA256 and a constant-time compare (libcrypto), for tokens and webhooks
//   TrackHubCurl      libcurl's multi interface, the webhooks' HTTP client
//   TrackHubServer    the hub: sessions, fan-out, HTTP API, auth, webhooks (on a thread of their
//                     own); imports no C module: it reaches each C library through an edge target
//   TrackHubCLI       flag, environment and config-file (libyaml) reading shared by the executables
//   trackhub          the command line (serve, token, simulate, config, version)
//   trackhub-load     the load generator
//   TrackHubTesting   what the Swift tests share (a test hub, clients, loopback sockets, Redis);
//                     used only by test targets, never linked into an executable
// Only the C* system-library targets see C headers, and only the edge targets (TrackHubStore,
// TrackHubRedis, TrackHubRouting, TrackHubLWS, TrackHubCrypto, TrackHubCurl, TrackHubCLI)
// import them; only TrackHubLWS imports libwebsockets.
let package = Package(
    name: "TrackHub",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "trackhub", targets: ["trackhub"]),
        .executable(name: "trackhub-load", targets: ["trackhub-load"]),
        .executable(name: "trackhub-bench", targets: ["TrackHubBench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .systemLibrary(
            name: "CRoutino",
            path: "Sources/CRoutino",
            providers: [.apt(["libroutino-dev"])]
        ),
        .target(name: "TrackHubSync"),
        .target(name: "TrackHubCore", linkerSettings: [.linkedLibrary("m")]),
        .target(name: "TrackHubProtocol", dependencies: ["TrackHubCore"], linkerSettings: [.linkedLibrary("m")]),
        .target(name: "TrackHubStore", dependencies: ["TrackHubCore", "TrackHubSync", "CSQLite"]),
        .target(name: "TrackHubRedis", dependencies: ["CHiredis"]),
        .target(name: "TrackHubLWS", dependencies: ["TrackHubProtocol", "TrackHubSync", "CLibWebSockets"]),
        .target(name: "TrackHubRouting", dependencies: ["TrackHubCore", "TrackHubSync", "CRoutino"]),
        .target(name: "TrackHubCrypto", dependencies: ["CCrypto"]),
        .target(name: "TrackHubCurl", dependencies: ["CCurl"]),
        .target(
            name: "TrackHubServer",
            dependencies: ["TrackHubCore", "TrackHubProtocol", "TrackHubStore", "TrackHubRedis", "TrackHubLWS", "TrackHubRouting", "TrackHubCrypto", "TrackHubCurl", "TrackHubSync"]
        ),
        .target(
            name: "TrackHubSimulator",
            dependencies: ["TrackHubCore", "TrackHubProtocol", "TrackHubLWS", "TrackHubSync"]
        ),
        .target(name: "TrackHubCLI", dependencies: ["CYAML"]),
        .target(
            name: "TrackHubTesting",
            dependencies: ["TrackHubServer", "TrackHubProtocol", "TrackHubLWS", "TrackHubStore", "TrackHubRedis", "TrackHubRouting", "TrackHubCLI", "TrackHubSync"]
        ),
        .executableTarget(name: "trackhub", dependencies: ["TrackHubServer", "TrackHubRouting", "TrackHubCurl", "TrackHubLWS", "TrackHubStore", "TrackHubRedis", "TrackHubSimulator", "TrackHubCLI"]),
        .executableTarget(
            name: "trackhub-load",
            dependencies: ["TrackHubProtocol", "TrackHubLWS", "TrackHubCLI", "TrackHubSync"]
        ),
        .executableTarget(
            name: "TrackHubBench",
            dependencies: ["TrackHubCore", "TrackHubProtocol"],
            path: "bench/TrackHubBench"
        ),
        .testTarget(name: "TrackHubCoreTests", dependencies: ["TrackHubCore"]),
        .testTarget(name: "TrackHubProtocolTests", dependencies: ["TrackHubProtocol"]),
        .testTarget(name: "TrackHubStoreTests", dependencies: ["TrackHubStore", "TrackHubSync"]),
        .testTarget(name: "TrackHubCLITests", dependencies: ["TrackHubCLI"]),
        .testTarget(name: "TrackHubSimulatorTests", dependencies: ["TrackHubSimulator", "TrackHubTesting"]),
        .testTarget(
            name: "TrackHubServerTests",
            dependencies: ["TrackHubServer", "TrackHubLWS", "TrackHubProtocol", "TrackHubRedis", "TrackHubRouting", "TrackHubCrypto", "TrackHubCLI", "TrackHubTesting", "TrackHubSync"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
