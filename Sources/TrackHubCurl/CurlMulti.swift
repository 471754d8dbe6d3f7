import CCurl
import Synchronization

/// libcurl's multi interface, as the webhook dispatcher uses it: POSTs started without
/// blocking, driven by `poll`, reported when done. The only C of the webhooks, in an edge
/// target of its own (beside hiredis's TrackHubRedis), so the hub's logic imports no C
/// module; the dispatcher reaches it through `WebhookTransport`, which a test can fake.
///
/// Threads: one thread (the dispatcher's) makes every call but `wake`, which libcurl allows
/// from any thread (`curl_multi_wakeup`). That is why the class is `@unchecked Sendable`.
public final class CurlMulti: @unchecked Sendable {
    /// A request that ended: its token, the HTTP status (0: none) and libcurl's error text
    /// when the transfer failed (timeout, refused connection, ...).
    public struct Done: Sendable {
        /// The token the request was started with (`post`).
        public var token: Int
        /// The HTTP status of the answer; 0 when there was none (the transfer failed).
        public var status: Int
        /// libcurl's text for a failed transfer (timeout, refused connection, ...); nil when answered.
        public var error: String?

        /// A finished request (libcurl's report, or a fake transport's in a test).
        public init(token: Int, status: Int, error: String?) {
            self.token = token
            self.status = status
            self.error = error
        }
    }

    /// libcurl could not be set up (its global init, or a multi handle).
    public struct SetupError: Error, CustomStringConvertible {
        /// What failed, for the one-line start-up error.
        public var description: String
    }

    private let multi: UnsafeMutableRawPointer
    private var transfers: [UnsafeMutableRawPointer: (token: Int, headers: UnsafeMutablePointer<curl_slist>?)] = [:]

    private static let globalInit: Bool = trackhub_curl_global_init() == CURLE_OK

    /// - Parameters:
    ///   - perHost: connections kept to one host (one receiver) at most.
    ///   - total: connections kept at once, to every host.
    /// - Throws: `SetupError` when libcurl cannot be set up.
    public init(perHost: Int, total: Int) throws(SetupError) {
        guard Self.globalInit, let multi = curl_multi_init() else { throw SetupError(description: "libcurl could not be initialised") }
        self.multi = multi
        _ = trackhub_curl_multi_limits(multi, perHost, total)
    }

    deinit {
        for (easy, transfer) in transfers {
            curl_multi_remove_handle(multi, easy)
            curl_easy_cleanup(easy)
            if let headers = transfer.headers { curl_slist_free_all(headers) }
        }
        curl_multi_cleanup(multi)
    }

    /// Transfers started and not yet reported done.
    public var activeCount: Int { transfers.count }

    /// Starts a POST of `body` to `url` with `headers` ("name: value"); it ends within `timeoutMs`.
    /// Returns false when libcurl refuses it (then nothing was started).
    public func post(token: Int, url: String, headers: [String], body: [UInt8], timeoutMs: Int) -> Bool {
        guard let easy = curl_easy_init() else { return false }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers {
            guard let next = curl_slist_append(list, header) else {
                if let list { curl_slist_free_all(list) }
                curl_easy_cleanup(easy)
                return false
            }
            list = next
        }
        // COPYPOSTFIELDS copies the body, so the buffer need only live through this call.
        var bytes = body
        bytes.append(0)
        let rc = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                trackhub_curl_setup_post(easy, url, chars.baseAddress, body.count, list, timeoutMs, timeoutMs)
            }
        }
        guard rc == CURLE_OK, curl_multi_add_handle(multi, easy) == CURLM_OK else {
            if let list { curl_slist_free_all(list) }
            curl_easy_cleanup(easy)
            return false
        }
        transfers[easy] = (token, list)
        return true
    }

    /// Moves every transfer on, waiting at most `timeoutMs` for sockets (or a `wake`), and
    /// returns the requests that ended.
    public func poll(timeoutMs: Int) -> [Done] {
        var running: Int32 = 0
        _ = curl_multi_perform(multi, &running)
        var done = collect()
        if done.isEmpty {
            _ = curl_multi_poll(multi, nil, 0, Int32(clamping: timeoutMs), nil)
            _ = curl_multi_perform(multi, &running)
            done = collect()
        }
        return done
    }

    /// Interrupts a `poll` from any thread.
    public func wake() {
        _ = curl_multi_wakeup(multi)
    }

    private func collect() -> [Done] {
        var out: [Done] = []
        var easy: UnsafeMutableRawPointer?
        var result = CURLE_OK
        while trackhub_curl_multi_next_done(multi, &easy, &result) == 1 {
            guard let handle = easy, let transfer = transfers.removeValue(forKey: handle) else { continue }
            let status = result == CURLE_OK ? trackhub_curl_status(handle) : 0
            let error = result == CURLE_OK ? nil : String(cString: curl_easy_strerror(result))
            curl_multi_remove_handle(multi, handle)
            curl_easy_cleanup(handle)
            if let headers = transfer.headers { curl_slist_free_all(headers) }
            out.append(Done(token: transfer.token, status: status, error: error))
        }
        return out
    }
}
