import TrackHubCurl

/// What the webhook dispatcher needs of an HTTP client: POSTs started without blocking,
/// moved on by `poll`, reported when done. libcurl's multi interface (`CurlMulti`, in the
/// TrackHubCurl edge target) is the one the hub runs; a test may hand the dispatcher another.
///
/// Threads: the dispatcher's thread makes every call but `wake`, which any thread may make.
public protocol WebhookTransport: AnyObject, Sendable {
    /// Transfers started and not yet reported done.
    var activeCount: Int { get }
    /// Starts a POST of `body` to `url` with `headers` ("name: value") that ends within
    /// `timeoutMs`; false when it could not be started (nothing was).
    func post(token: Int, url: String, headers: [String], body: [UInt8], timeoutMs: Int) -> Bool
    /// Moves every transfer on, waiting at most `timeoutMs` (or until `wake`), and returns
    /// the ones that ended.
    func poll(timeoutMs: Int) -> [CurlMulti.Done]
    /// Interrupts a `poll` from any thread.
    func wake()
}

extension CurlMulti: WebhookTransport {}
