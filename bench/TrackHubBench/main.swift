// trackhub-bench [mode]: dependency-free benchmarks that print numbers (never run in tests).
// Modes:
//   core (default)         route snapping, trip ticks, fix throughput
//   fleet [--riders N | <csv>] [options]  the clustering index rebuilt per fleet tick (bench/fleet/compare.py drives it)
//   messages [kind]        trackhub-load's reads of each received message (ServerMessage), ns per message
import Foundation

let mode = CommandLine.arguments.dropFirst().first ?? "core"
switch mode {
case "core":
    CoreBench.run()
case "fleet":
    runFleetBench(arguments: Array(CommandLine.arguments.dropFirst(2)))
case "messages":
    MessageBench.run(only: CommandLine.arguments.dropFirst(2).first)
default:
    FileHandle.standardError.write(Data("trackhub-bench: unknown mode \(mode) (modes: core, fleet, messages)\n".utf8))
    exit(2)
}
