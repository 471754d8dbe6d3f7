import Foundation
import TrackHubCLI
import TrackHubRouting

/// `trackhub router build OSMFILE DIR` (PROTOCOL 16): a Routino database for `serve --router
/// routino:DIR`, made by Routino's own `planetsplitter` with Debian's tagging rules
/// (routino-common), then loaded once to check it works with every mode's profile.
enum RouterCommand {
    static let help = """
    Usage: trackhub router build OSMFILE DIR

    Makes a Routino routing database in DIR (created if missing) from an OpenStreetMap file
    (.osm XML, or .pbf / .o5m, plain or .gz / .bz2), for `trackhub serve --router routino:DIR`.
    Runs Routino's planetsplitter with the tagging rules in /usr/share/routino/tagging.xml
    (Debian: apt install routino routino-common), then checks that the car, bicycle and foot
    profiles load against it. scripts/geojson_to_osm.py turns the project's GeoJSON roads
    into such a file (docs/routing.md).

      --planetsplitter PATH     the planetsplitter to run (default: planetsplitter on PATH)
      --tagging FILE            Routino tagging rules (default /usr/share/routino/tagging.xml)
    """

    static let defaultTagging = "/usr/share/routino/tagging.xml"

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.first == "build" else {
            if arguments.first == "--help" || arguments.first == "-h" {
                print(help)
                return 0
            }
            return fail("usage: trackhub router build OSMFILE DIR")
        }
        var positional: [String] = []
        var planetsplitter = "planetsplitter"
        var tagging = defaultTagging
        var rest = Array(arguments.dropFirst())[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h":
                print(help)
                return 0
            case "--planetsplitter", "--tagging":
                guard let value = rest.popFirst() else { return fail("\(argument) needs a value") }
                if argument == "--tagging" { tagging = value } else { planetsplitter = value }
            default:
                if argument.hasPrefix("--") { return fail("unknown flag \(argument)") }
                positional.append(argument)
            }
        }
        guard positional.count == 2 else { return fail("usage: trackhub router build OSMFILE DIR") }
        let (osmFile, directory) = (positional[0], positional[1])
        guard FileManager.default.isReadableFile(atPath: osmFile) else { return fail("OSMFILE: cannot read \(osmFile)") }
        guard FileManager.default.isReadableFile(atPath: tagging) else {
            return fail("--tagging: cannot read \(tagging) (install routino-common)")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            return fail("DIR: cannot create \(directory) (\(error.localizedDescription))")
        }
        guard let program = resolve(planetsplitter) else {
            return fail("planetsplitter not found (install routino, or give --planetsplitter PATH)")
        }
        let status: Int32
        do {
            // Its progress goes to the log file in DIR, not the terminal.
            let child = try ChildProcess.spawn(
                program, ["--dir=\(directory)", "--tagging=\(tagging)", "--loggable", "--errorlog=planetsplitter-errors.log", osmFile],
                quietOutput: true)
            status = child.wait()
        } catch {
            return fail("cannot run \(program): \(error)")
        }
        guard status == 0 else { return fail("planetsplitter failed (exit \(status)); see \(directory)/planetsplitter-errors.log") }
        do {
            _ = try RoutinoRouter(directory: directory)
        } catch {
            return fail(error.message)
        }
        print("routing database in \(directory) (for: trackhub serve --router routino:\(directory))")
        return 0
    }

    /// `name` as given when it has a slash, else the first executable of that name on PATH.
    static func resolve(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("trackhub router: \(message)\n".utf8))
        return 2
    }
}
