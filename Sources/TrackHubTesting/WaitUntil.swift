import Foundation

/// Waits until `condition` holds, checking every 20 ms, or throws `TestFailure` after
/// `timeout` seconds. For conditions nothing notifies about (a hub-side counter, an
/// HTTP-visible state, a child process that starts answering).
public func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    let pause = DispatchSemaphore(value: 0)
    while try !condition() {
        if Date() >= deadline { throw TestFailure(description: "timed out waiting for \(what)") }
        _ = pause.wait(timeout: .now() + .milliseconds(20))
    }
}
