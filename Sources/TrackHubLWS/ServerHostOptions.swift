/// Options for the listening socket and the event loop.
public struct ServerHostOptions: Sendable {
    /// The numeric address to bind (`ListenAddress.resolve` made it numeric); a wildcard binds every interface.
    public var host: String
    /// The port; 0 binds an ephemeral one (`LWSServerHost.boundPort`).
    public var port: Int
    /// libev (epoll) for production; the poll loop lets several hosts share one process (tests).
    public var useLibev: Bool
    /// Largest WebSocket message, fragments joined (`--max-message`); past it: close 1009.
    public var maxMessageBytes: Int
    /// Largest declared HTTP body (`--max-body`); past it: 413, the body not read.
    public var maxBodyBytes: Int
    /// How long a request's body may take to arrive after its headers (`--body-timeout`); 0: no limit.
    public var bodyTimeoutMicros: Int64 = 10_000_000
    /// Most TCP connections (HTTP and WebSocket alike) from one peer address; 0: no limit.
    public var maxConnectionsPerAddress: Int = 0
    /// PEM certificate and key: both set, the host serves TLS.
    public var tlsCertPath: String?
    /// The PEM private key of `tlsCertPath`; set both or neither.
    public var tlsKeyPath: String?
    /// Where libwebsockets' own log lines go (installed process-wide when the host starts).
    public var logs: LWSLogSink
    /// A second listening address (numeric host) on the same context, a vhost of its own
    /// (`--osmand-listen`): its requests carry `HTTPRequest.isSecondListener`; it takes no
    /// WebSocket upgrades. Nil: none.
    public var secondHost: String?
    /// The second address's port; 0 binds an ephemeral one. Ignored without `secondHost`.
    public var secondPort: Int = 0

    /// Options; see the properties.
    public init(
        host: String, port: Int, useLibev: Bool, maxMessageBytes: Int, maxBodyBytes: Int,
        bodyTimeoutMicros: Int64 = 10_000_000, maxConnectionsPerAddress: Int = 0,
        tlsCertPath: String? = nil, tlsKeyPath: String? = nil, logs: LWSLogSink,
        secondHost: String? = nil, secondPort: Int = 0
    ) {
        self.secondHost = secondHost
        self.secondPort = secondPort
        self.host = host
        self.port = port
        self.useLibev = useLibev
        self.maxMessageBytes = maxMessageBytes
        self.maxBodyBytes = maxBodyBytes
        self.bodyTimeoutMicros = bodyTimeoutMicros
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.tlsCertPath = tlsCertPath
        self.tlsKeyPath = tlsKeyPath
        self.logs = logs
    }
}

/// Why a host could not start.
public enum ServerHostError: Error, CustomStringConvertible {
    /// `lws_create_context` failed; the text says what to check.
    case contextCreationFailed(String)
    /// A listening address could not be had (PROTOCOL 14: one line naming it, exit 2);
    /// `reason` is the kernel's answer to a bind of it (`ListenAddress.bindProblem`).
    case listenFailed(ListenAddress, reason: String)

    /// The listen failure of `address`, with the reason asked of the kernel then.
    public static func cannotListen(on address: ListenAddress) -> ServerHostError {
        .listenFailed(address, reason: address.bindProblem()
            ?? "it binds now, so the event-loop plugin or the TLS files are likelier; --log-level debug shows libwebsockets' own lines")
    }

    /// The reason as one line, for `trackhub serve`'s error.
    public var description: String {
        switch self {
        case .contextCreationFailed(let why): return why
        case .listenFailed(let address, let reason): return "could not listen on \(address.authority): \(reason)"
        }
    }
}
