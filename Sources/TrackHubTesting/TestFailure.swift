/// A test helper's failure (a timeout, a refused connection, a malformed answer), with a
/// sentence saying what was awaited or what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    /// What was awaited or what went wrong, as one sentence for the test log.
    public var description: String

    /// A failure; `description` is what the test log shows.
    public init(description: String) { self.description = description }
}
