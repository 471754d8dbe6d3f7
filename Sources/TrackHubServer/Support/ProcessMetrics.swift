import Foundation

/// The standard `process_*` metrics of Prometheus client libraries, read from Linux's /proc
/// at each scrape (a few small reads and one directory listing; /proc/self/fd has one entry
/// per open connection, so ~1 ms at 10 000 connections). Where /proc is missing (macOS),
/// the lines are left out rather than written as zeros.
struct ProcessMetrics {
    var cpuSeconds: Double
    var residentBytes: Int
    var openFDs: Int
    var startTimeSeconds: Double

    static func read() -> ProcessMetrics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let fields = statFields(stat), fields.count > 19,
              let utime = Double(fields[11]), let stime = Double(fields[12]), let startTicks = Double(fields[19]),
              let bootTime = bootTime(system)
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return ProcessMetrics(
            cpuSeconds: (utime + stime) / ticks,
            residentBytes: pages * Int(sysconf(Int32(_SC_PAGESIZE))),
            openFDs: openDescriptors(),
            startTimeSeconds: bootTime + startTicks / ticks)
    }

    /// The fields of /proc/self/stat after the command name, starting at field 3 (`state`).
    /// The name is in parentheses and may hold spaces or parentheses: cut at the last `)`.
    static func statFields(_ text: String) -> [Substring]? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// `btime` of /proc/stat: the boot time in seconds since the epoch.
    static func bootTime(_ text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Entries of /proc/self/fd, less the one the listing itself holds open. (Read by name:
    /// copying a `dirent` out of readdir's buffer reads past the end of a short last entry.)
    private static func openDescriptors() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        return max(0, names.count - 1)
    }

    func render() -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.", String(cpuSeconds))
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", String(residentBytes))
        metric("process_open_fds", "gauge", "Open file descriptors.", String(openFDs))
        metric("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.", String(startTimeSeconds))
        return out
    }
}
