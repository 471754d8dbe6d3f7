import Foundation
import TrackHubCLI

/// `--processes N`: one process holds at most ~19 000 connections (the 20 000-file limit)
/// and runs one libev loop, so bigger runs start N copies of this program, each a shard of
/// the trips (with their couriers and viewers), and merge their JSON lines.
enum Fanout {
    static func run(options: LoadOptions, arguments: [String]) -> Int32 {
        // Strip --processes (and any --shard) and give each child its shard and the run id.
        var childArguments: [String] = []
        var skip = false
        for argument in arguments {
            if skip { skip = false; continue }
            if argument == "--processes" || argument == "--shard" || argument == "--run-id" { skip = true; continue }
            if argument.hasPrefix("--processes=") || argument.hasPrefix("--shard=") || argument.hasPrefix("--run-id=") { continue }
            childArguments.append(argument)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["TRACKHUB_LOAD_PROCESSES"] = nil
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var children: [ChildProcess] = []
        for shard in 0..<options.processes {
            let arguments = childArguments + ["--processes", "1", "--shard", "\(shard)/\(options.processes)", "--run-id", options.runID]
            do {
                // ChildProcess, not Foundation's Process: see its comment.
                children.append(try ChildProcess.spawn(executable.path, arguments, environment: environment, captureOutput: true))
            } catch {
                FileHandle.standardError.write(Data("trackhub-load: cannot start shard \(shard): \(error)\n".utf8))
                return 1
            }
        }
        var lines: [String] = []
        var worst: Int32 = 0
        for child in children {
            let data = child.readOutput()
            worst = max(worst, child.wait())
            if let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last { lines.append(String(last)) }
        }
        guard lines.count == children.count, let merged = FanoutMerge.merge(lines, options: options) else {
            FileHandle.standardError.write(Data("trackhub-load: a shard gave no summary\n".utf8))
            return max(worst, 1)
        }
        FileHandle.standardError.write(Data(merged.table.utf8))
        FileHandle.standardOutput.write(Data((merged.json + "\n").utf8))
        return merged.errors > options.maxErrors ? 1 : (worst == 2 ? 2 : 0)
    }
}
