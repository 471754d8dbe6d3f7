/// Keeps one libwebsockets line that repeats from flooding the log. lws logs one line per
/// failed call, and some calls fail in a tight loop: at the process's file limit (`accept`
/// failing with EMFILE) a hub printed 4 GB of the same line in nine minutes. A line equal to
/// the last one within `windowMs` of when that one was printed is only counted; the count
/// goes out with the next line printed (at the latest the same line a window later).
struct RepeatedLines {
    /// How long the same line is counted instead of printed.
    static let windowMs: Int64 = 1000

    private var last: String?
    private var lastPrintedAt: Int64 = .min
    private var repeats = 0

    /// What to print for `text` at `nowMs`: nothing while it repeats within the window; else
    /// how often the previous line repeated (when it did), then `text`.
    mutating func admit(_ text: String, nowMs: Int64) -> [String] {
        if text == last, nowMs - lastPrintedAt < Self.windowMs {
            repeats += 1
            return []
        }
        var out: [String] = []
        if repeats > 0 { out.append("the previous line repeated \(repeats) more times") }
        repeats = 0
        last = text
        lastPrintedAt = nowMs
        out.append(text)
        return out
    }
}
