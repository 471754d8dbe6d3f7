import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its standard output optionally read through a
/// pipe. Used instead of Foundation's `Process`: on Linux its `run()` (Swift 6.3.1) lists
/// /proc/self/fd copying a fixed 256 bytes per entry, reading past glibc's buffer; it crashes
/// now and then (swift-corelibs-foundation pull request 5472). The child also starts with no
/// signals blocked and default handlers, whatever the parent's threads block.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id; still valid (unreaped) until `wait` returns.
    public let pid: pid_t
    private var outputFD: Int32?
    private var exitStatus: Int32?

    /// Why `spawn` failed: the pipe could not be made, or the program could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// One line: `pipe` or the program's path, and the system's reason.
        public let description: String
    }

    /// Starts `path` with `arguments`. `environment` nil: this process's. `captureOutput`:
    /// standard output goes to a pipe (read it with `readOutput`), else it is inherited.
    /// `quietErrors`: standard error goes to /dev/null.
    public static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        captureOutput: Bool = false, quietOutput: Bool = false, quietErrors: Bool = false
    ) throws(SpawnError) -> ChildProcess {
        var pipeFDs: [Int32] = [-1, -1]
        if captureOutput && pipe(&pipeFDs) != 0 {
            throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
            posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        } else if quietOutput {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if quietErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") }
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { a in
            (env + [nil]).withUnsafeBufferPointer { e in
                posix_spawn(&pid, path, &actions, &attributes, a.baseAddress!, e.baseAddress!)
            }
        }
        if captureOutput { close(pipeFDs[1]) }
        guard result == 0 else {
            if captureOutput { close(pipeFDs[0]) }
            throw SpawnError(description: "\(path): \(String(cString: strerror(result)))")
        }
        return ChildProcess(pid: pid, outputFD: captureOutput ? pipeFDs[0] : nil)
    }

    private init(pid: pid_t, outputFD: Int32?) {
        self.pid = pid
        self.outputFD = outputFD
    }

    deinit {
        if let outputFD { close(outputFD) }
    }

    /// Reads the captured standard output to its end (the child closed it or exited).
    public func readOutput() -> Data {
        guard let fd = outputFD else { return Data() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                data.append(contentsOf: buffer[0..<n])
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(fd)
        outputFD = nil
        return data
    }

    /// Waits for the child to end: its exit status, or 128 + the signal that ended it.
    @discardableResult
    public func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        return code
    }

    /// Sends `signal` to the child unless `wait` has reaped it (its pid may then be another's).
    public func signal(_ signal: Int32) {
        if exitStatus == nil { kill(pid, signal) }
    }
}
