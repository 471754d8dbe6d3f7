// Two threads each add 1 to a shared counter 100 000 times, guarded (or not) by the lock the
// first argument names. Built with --sanitize=thread, ThreadSanitizer's reports tell which
// locks it understands: see run.sh for the expected counts and docs/architecture.md "Threads".
import Foundation
import Synchronization
import TrackHubSync

/// A counter shared by reference, its guarding left to the caller (hence `@unchecked`).
final class Counter: @unchecked Sendable { var n = 0 }

let iterations = 100_000

/// Runs `body` on two threads at once and waits for both.
func onTwoThreads(_ body: @escaping @Sendable (_ thread: Int) -> Void) {
    let group = DispatchGroup()
    for thread in 0..<2 {
        group.enter()
        Thread.detachNewThread { body(thread); group.leave() }
    }
    group.wait()
}

let counter = Counter()
switch CommandLine.arguments.dropFirst().first ?? "" {
case "mutex":  // Synchronization.Mutex: correct (the total is right) but reported, a false race
    let lock = Mutex(())
    onTwoThreads { _ in for _ in 0..<iterations { lock.withLock { _ in counter.n += 1 } } }
case "mutex-value":  // the same, on the value the Mutex holds
    let lock = Mutex(0)
    onTwoThreads { _ in for _ in 0..<iterations { lock.withLock { $0 += 1 } } }
    counter.n = lock.withLock { $0 }
case "hubmutex":  // HubMutex, built with -DTRACKHUB_TSAN: correct and not reported
    let lock = HubMutex(())
    onTwoThreads { _ in for _ in 0..<iterations { lock.withLock { _ in counter.n += 1 } } }
case "hubmutex-value":
    let lock = HubMutex(0)
    onTwoThreads { _ in for _ in 0..<iterations { lock.withLock { $0 += 1 } } }
    counter.n = lock.withLock { $0 }
case "nslock":  // pthread_mutex underneath, which TSan intercepts: not reported
    let lock = NSLock()
    onTwoThreads { _ in for _ in 0..<iterations { lock.lock(); counter.n += 1; lock.unlock() } }
case "hubmutex-one-side":  // a real race HubMutex must not hide: one thread skips the lock
    let lock = HubMutex(())
    onTwoThreads { thread in
        for _ in 0..<iterations {
            if thread == 0 { lock.withLock { _ in counter.n += 1 } } else { counter.n += 1 }
        }
    }
case "unlocked":  // a real race: reported
    onTwoThreads { _ in for _ in 0..<iterations { counter.n += 1 } }
default:
    print("usage: repro mutex|mutex-value|hubmutex|hubmutex-value|nslock|hubmutex-one-side|unlocked")
    exit(2)
}
print("total \(counter.n) of \(2 * iterations)")
