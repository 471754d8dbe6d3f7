import Foundation

/// Finds the project's `data/samples/` folder at run time, like the hub finds `web-client/`:
/// the `--samples` override, else the working directory's, else walking up from the binary.
public enum SampleData {
    /// The file every samples folder has; its presence identifies the folder.
    static let marker = "routes_i95.geojson"

    /// The samples folder, or nil when none is found.
    public static func locate(override: String? = nil) -> String? {
        if let override {
            return FileManager.default.fileExists(atPath: override + "/" + marker) ? override : nil
        }
        var candidates = [FileManager.default.currentDirectoryPath + "/data/samples"]
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(directory.appendingPathComponent("data/samples").path)
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/" + marker) }
    }
}
