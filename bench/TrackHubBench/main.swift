// trackhub-bench [mode]: dependency-free benchmarks that print numbers (never run in tests).
// Modes: core (default) — route snapping, trip ticks, fix throughput.
import Foundation

let mode = CommandLine.arguments.dropFirst().first ?? "core"
switch mode {
case "core":
    CoreBench.run()
default:
    FileHandle.standardError.write(Data("trackhub-bench: unknown mode \(mode) (modes: core)\n".utf8))
    exit(2)
}
