import Foundation

// trackhub-load: see LoadOptions.help and docs/load-testing.md.
enum LoadMain {
    static func run() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let options: LoadOptions
        do {
            guard let parsed = try LoadOptions.parse(arguments) else {
                print(LoadOptions.help)
                exit(0)
            }
            options = parsed
        } catch {
            FileHandle.standardError.write(Data("trackhub-load: \(error)\n".utf8))
            exit(2)
        }
        signal(SIGPIPE, SIG_IGN)

        if options.processes > 1 {
            exit(Fanout.run(options: options, arguments: arguments))
        }

        let routes: [LoadRoute]
        do {
            routes = try RouteBook.load(path: options.routesPath)
        } catch {
            FileHandle.standardError.write(Data("trackhub-load: \(error)\n".utf8))
            exit(2)
        }

        var observed = RunObservations()
        guard let hubURL = WebSocketURL(options.url) else {
            FileHandle.standardError.write(Data("trackhub-load: --url: \(options.url) is not ws://HOST:PORT\n".utf8))
            exit(2)
        }
        let http = HubHTTP(base: hubURL.httpBase, token: options.token)
        if options.target == .trackhub { observed.metricsBefore = http.metrics() }
        observed.hubBefore = options.hubPID.flatMap { ProcessProbe.sample(pid: $0) }
        let run = LoadRun(options: options, routes: routes, endpoint: hubURL)
        let planned = run.plannedConnections
        run.createTrips()
        run.createStopLinks()
        let counters: LoadCounters
        do {
            counters = try run.run(observing: &observed)
        } catch {
            FileHandle.standardError.write(Data("trackhub-load: \(error)\n".utf8))
            exit(1)
        }
        if options.target == .trackhub { observed.metricsAfter = http.metrics() }
        let report = RunReport(options: options, counters: counters, observed: observed, planned: planned)
        FileHandle.standardError.write(Data(report.table.utf8))
        FileHandle.standardOutput.write(Data((report.json.text + "\n").utf8))
        exit(counters.errors > options.maxErrors ? 1 : 0)
    }
}

LoadMain.run()
