import Foundation

/// One hub per data directory (PROTOCOL 14): two writers on one SQLite file is how acked
/// fixes get lost. `serve` takes an exclusive `flock` on `DIR/trackhub.lock` at start and
/// holds it until the process ends; the kernel drops it when the process dies (SIGKILL
/// included), so a crash never leaves a stale lock behind.
public final class DataDirectoryLock: @unchecked Sendable {
    // The descriptor is only closed in deinit: nothing else touches it.
    private let descriptor: Int32
    /// The lock file, `DIR/trackhub.lock`; it holds the holder's pid, for people only.
    public let path: String

    /// Creates the directory if missing (mode 0750) and takes the lock; throws a one-line
    /// reason naming the directory when another process holds it or it cannot be used.
    public init(directory: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            } catch {
                throw .unusable(path: directory, reason: "cannot create the data directory: \(error.localizedDescription)")
            }
        } else if !isDirectory.boolValue {
            throw .unusable(path: directory, reason: "is not a directory")
        }
        path = (directory as NSString).appendingPathComponent("trackhub.lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else {
            throw .unusable(path: path, reason: "cannot open the lock file: \(String(cString: strerror(errno)))")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .unusable(path: directory, reason: busy
                ? "is in use by another trackhub serve (one hub per data directory)"
                : "cannot lock the data directory: \(reason)")
        }
        // The holder's pid, for an operator looking at the file; the lock is what counts.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    deinit { close(descriptor) }
}
