import Foundation

/// CPU time and resident memory of a process on this machine, from `/proc`.
struct ProcessSample: Sendable {
    var cpuSeconds: Double
    var rssBytes: Int
    var atMicros: Int64
}

enum ProcessProbe {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func sample(pid: Int32) -> ProcessSample? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3; utime and stime are 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        var rss = 0
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) {
            for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
                rss = (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
            }
        }
        return ProcessSample(cpuSeconds: (utime + stime) / ticksPerSecond, rssBytes: rss, atMicros: wallMicros())
    }

    /// CPU use between two samples, in percent of one core.
    static func cpuPercent(_ a: ProcessSample, _ b: ProcessSample) -> Double {
        let wall = Double(b.atMicros - a.atMicros) / 1_000_000
        return wall > 0 ? (b.cpuSeconds - a.cpuSeconds) / wall * 100 : 0
    }
}

/// The whole machine's CPU from `/proc/stat`: on a shared machine, what other processes
/// took during the window is part of the result.
struct MachineSample: Sendable {
    var busyTicks: Double
    var totalTicks: Double

    static func now() -> MachineSample? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return nil }
        let total = values.prefix(8).reduce(0, +)
        return MachineSample(busyTicks: total - values[3] - values[4], totalTicks: total)
    }

    /// Busy share between two samples, in percent of all cores (100 = every core busy).
    static func busyPercent(_ a: MachineSample, _ b: MachineSample) -> Double {
        let total = b.totalTicks - a.totalTicks
        return total > 0 ? (b.busyTicks - a.busyTicks) / total * 100 : 0
    }
}
