import Foundation

/// Reads a whole file a flag names (`--config`, `--jwt-secret-file`); the error names the
/// flag, the path and the system's reason, on one line.
enum ReadableFile {
    static func bytes(_ path: String, label: String) throws(UsageError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            // contents(atPath:) gives no reason; access(2) finds the usual ones (missing, denied).
            let reason = access(path, R_OK) == 0 ? "not a readable file" : String(cString: strerror(errno))
            throw UsageError("\(label): cannot read \(path): \(reason)")
        }
        return [UInt8](data)
    }
}
