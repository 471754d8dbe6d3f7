import Foundation
import TrackHubSync

/// The hub's one service thread: it sets the loop up, runs it until it is asked to stop,
/// tears down, and tells the thread that started it when it is up (or why it could not
/// start) and when it has stopped. Everything of the hub runs on it (docs/architecture.md).
final class ServiceThread: Sendable {
    private let started = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let startError = HubMutex<String?>(nil)

    /// Starts the thread and returns once `setUp` has run on it: `setUp`'s error is thrown
    /// here (and `run`, `tearDown` never run). Then `run` (the loop, until stopped) and
    /// `tearDown` follow on the thread.
    func start(
        setUp: @escaping @Sendable () throws -> Void, run: @escaping @Sendable () -> Void,
        tearDown: @escaping @Sendable () -> Void
    ) throws(ServiceThreadError) {
        let thread = Thread { [self] in
            do {
                try setUp()
            } catch {
                startError.withLock { $0 = "\(error)" }
                started.signal()
                stopped.signal()
                return
            }
            started.signal()
            run()
            tearDown()
            stopped.signal()
        }
        thread.name = "trackhub-service"
        thread.stackSize = 4 << 20  // deep enough for lws callbacks into Swift
        thread.start()
        started.wait()
        if let message = startError.withLock({ $0 }) { throw ServiceThreadError(message: message) }
    }

    /// Blocks until the thread has stopped (at once if it never started).
    func waitUntilStopped() {
        stopped.wait()
        stopped.signal()
    }
}

/// Why the service thread could not start (the host could not bind, say).
struct ServiceThreadError: Error, CustomStringConvertible {
    /// The setup's own error, as text.
    let message: String
    var description: String { message }
}

/// When the service loop last did its periodic chores (Hub+Tick), by the hub's wall clock.
struct LoopTimes {
    /// The last flush of marker states that changed without an event (every 100 ms).
    var lastStateFlush: Int64 = 0
    /// The last housekeeping (every 500 ms or so): slow readers, keep-alive, tokens, the log's.
    var lastHousekeeping: Int64 = 0
}
