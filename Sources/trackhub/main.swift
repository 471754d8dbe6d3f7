import Foundation
import TrackHubProtocol

let usage = """
Usage: trackhub <command> [flags]

Commands:
  serve      run the hub (trackhub serve --help)
  token      mint a token for a secured hub (trackhub token --help)
  simulate   drive simulated couriers against a hub (trackhub simulate --help)
  config     print a config file for serve --config (trackhub config default)
  router     make a routing database for serve --router (trackhub router build OSMFILE DIR)
  version    print the version (also: trackhub --version)
"""

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve":
    exit(ServeCommand.run(Array(arguments.dropFirst())))
case "simulate":
    exit(SimulateCommand.run(Array(arguments.dropFirst())))
case "token":
    exit(TokenCommand.run(Array(arguments.dropFirst())))
case "config":
    exit(ConfigCommand.run(Array(arguments.dropFirst())))
case "router":
    exit(RouterCommand.run(Array(arguments.dropFirst())))
case "version", "--version":
    print("trackhub \(TrackHubVersion.current)")
    exit(0)
case "-h", "--help", "help", nil:
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
default:
    FileHandle.standardError.write(Data("trackhub: unknown command \(arguments[0])\n".utf8))
    exit(2)
}
