import Dispatch
import Foundation

/// Turns SIGTERM and SIGINT into one call of `handler` (a second signal exits at once).
final class SignalWatcher {
    private let sources: [DispatchSourceSignal]

    /// Watches `signals` (number and name). A second signal of any watcher exits at once.
    init(_ signals: [(Int32, String)] = [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")], handler: @escaping @Sendable (String) -> Void) {
        let queue = DispatchQueue(label: "trackhub.signals")
        var made: [DispatchSourceSignal] = []
        let fired = SignalWatcher.fired
        for (number, name) in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if fired.increment() > 1 { exit(1) }
                handler(name)
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    private static let fired = SignalCount()

    /// Blocks `signals` in the calling thread, and so in every thread it starts after. Call
    /// it first, before any thread exists: Linux's libdispatch reads a signal source through
    /// a `signalfd`, which sees a signal only while every thread blocks it; a signal the
    /// kernel hands to a thread that does not (a store or Dispatch worker started earlier)
    /// meets `SIG_IGN` there and is lost. A SIGTERM lost that way left a hub undrained
    /// (test_operations' systemd test saw no STOPPING=1 within 30 s, once under load).
    static func blockInEveryThread(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

/// How many signals arrived (touched only on the signal queue, but kept atomic for clarity).
private final class SignalCount: @unchecked Sendable {
    private var count = 0
    private let lock = NSLock()
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
