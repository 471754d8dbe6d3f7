import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TrackHubSync

/// The few HTTP calls a run makes (create and end trips, read `/metrics`), off the event loop.
struct HubHTTP: Sendable {
    let base: String
    let token: String?

    struct Response: Sendable {
        var status: Int
        var body: Data
    }

    /// One request, waited for; nil when no answer came (refused, timeout).
    func request(_ method: String, _ path: String, json: String? = nil, timeout: TimeInterval = 30) -> Response? {
        guard let url = URL(string: base + path) else { return nil }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let done = DispatchSemaphore(value: 0)
        let result = HubMutex<Response?>(nil)
        let task = URLSession.shared.dataTask(with: request) { data, response, _ in
            if let http = response as? HTTPURLResponse {
                result.withLock { $0 = Response(status: http.statusCode, body: data ?? Data()) }
            }
            done.signal()
        }
        task.resume()
        done.wait()
        return result.withLock { $0 }
    }

    /// Runs `count` jobs on `parallel` threads; returns how many failed.
    static func forEach(_ count: Int, parallel: Int = 16, _ job: @escaping @Sendable (Int) -> Bool) -> Int {
        let next = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<max(1, min(parallel, count)) {
            group.enter()
            Thread.detachNewThread {
                while true {
                    let i = next.add(1, ordering: .relaxed).oldValue
                    if i >= count { break }
                    if !job(i) { failures.add(1, ordering: .relaxed) }
                }
                group.leave()
            }
        }
        group.wait()
        return failures.load(ordering: .relaxed)
    }

    /// The hub's `/metrics` as name (with labels) → value; nil when unreachable.
    func metrics() -> [String: Double]? {
        guard let response = request("GET", "/metrics", timeout: 10), response.status == 200 else { return nil }
        var values: [String: Double] = [:]
        for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }
}
