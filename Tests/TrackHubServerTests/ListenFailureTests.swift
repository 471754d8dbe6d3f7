import Foundation
import Testing
import TrackHubSync
@testable import TrackHubLWS

/// PROTOCOL 14: an address that cannot be bound is the hub's one line, not libwebsockets'
/// own account before it. lws's lines of a start are held; a failed start demotes them to
/// debug, a good one passes them on as they came.
@Suite struct ListenFailureTests {
    /// A sink that keeps what it is given.
    final class Captured: Sendable {
        let lines = HubMutex<[(LWSLogLevel, String)]>([])
        var sink: LWSLogSink {
            LWSLogSink(wantsNotices: { false }, emit: { level, text in self.lines.withLock { $0.append((level, text)) } })
        }
        var all: [(LWSLogLevel, String)] { lines.withLock { $0 } }
    }

    /// A listening socket on a free loopback port, which the test then asks the host to bind.
    static func takenPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func aPortInUseThrowsOneErrorNamingItAndLWSLinesAreDebugOnly() throws {
        let (fd, port) = try Self.takenPort()
        defer { close(fd) }
        let captured = Captured()
        let host = LWSServerHost(options: ServerHostOptions(
            host: "127.0.0.1", port: port, useLibev: false, maxMessageBytes: 65536, maxBodyBytes: 1 << 20,
            logs: captured.sink))
        #expect {
            try host.start()
        } throws: { error in
            "\(error)" == "could not listen on 127.0.0.1:\(port): the port is in use"
        }
        // lws said why (its bind error names the port), only at debug.
        let aboutPort = captured.all.filter { $0.1.contains(String(port)) }
        #expect(!aboutPort.isEmpty, "lws's lines were lost, not demoted: \(captured.all)")
        #expect(aboutPort.allSatisfy { $0.0 == .debug }, "\(aboutPort)")
    }

    @Test func theOsmAndAddressInUseNamesThatAddress() throws {
        let (fd, port) = try Self.takenPort()
        defer { close(fd) }
        let captured = Captured()
        let host = LWSServerHost(options: ServerHostOptions(
            host: "127.0.0.1", port: 0, useLibev: false, maxMessageBytes: 65536, maxBodyBytes: 1 << 20,
            logs: captured.sink, secondHost: "127.0.0.1", secondPort: port))
        #expect {
            try host.start()
        } throws: { error in
            "\(error)" == "could not listen on 127.0.0.1:\(port): the port is in use"
        }
        #expect(captured.all.allSatisfy { $0.0 == .debug || !$0.1.contains(String(port)) }, "\(captured.all)")
    }

    @Test func bindProblemSaysWhy() throws {
        let (fd, port) = try Self.takenPort()
        defer { close(fd) }
        #expect(ListenAddress(host: "127.0.0.1", port: port).bindProblem() == "the port is in use")
        // TEST-NET-1 (RFC 5737) is no interface of any machine.
        #expect(ListenAddress(host: "192.0.2.1", port: port).bindProblem() == "the address is not one of this machine's")
        #expect(ListenAddress(host: "127.0.0.1", port: 0).bindProblem() == nil)
    }

    /// The hold is the starting thread's alone: its lines wait for the end of the start, and
    /// the lines other threads log meanwhile (another host's service thread) are not held.
    /// Not async: the hold is keyed by thread, and an `await` may resume on another.
    @Test func heldLinesWaitForTheStartsEndAndOtherThreadsPassBy() {
        let failed = Captured(), started = Captured()
        LWSLog.hold(for: failed.sink)
        LWSLog.emit(.error, "ERROR on binding fd 9 to port 1 (-1 98)")
        LWSLog.emit(.warning, "a warning")
        // NOTICE: whichever sink is routed now, the line is debug there, not noise in the run.
        let passed = DispatchSemaphore(value: 0)
        Thread {
            LWSLog.emit(.notice, "another host's line")
            passed.signal()
        }.start()
        #expect(passed.wait(timeout: .now() + 10) == .success)
        #expect(failed.all.isEmpty, "nothing reaches the sink before the start ends: \(failed.all)")
        LWSLog.release(started: false)
        #expect(failed.all.map(\.0) == [.debug, .debug])
        #expect(failed.all.map(\.1) == ["ERROR on binding fd 9 to port 1 (-1 98)", "a warning"])

        LWSLog.hold(for: started.sink)
        LWSLog.emit(.warning, "a TLS warning")
        LWSLog.release(started: true)
        #expect(started.all.map(\.0) == [.warning])
        LWSLog.release(started: true)  // no hold: nothing happens
        #expect(started.all.count == 1)
    }
}
