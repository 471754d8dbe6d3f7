import Foundation
import Testing
import TrackHubCLI

@Suite struct ConfigFileTests {
    func parse(_ text: String) throws -> [String: [String]] {
        let file = try ConfigFile.parse(text, path: "t.yaml")
        return Dictionary(uniqueKeysWithValues: file.entries.map { ($0.key, $0.values) })
    }

    func failure(_ text: String) -> String? {
        do {
            _ = try ConfigFile.parse(text, path: "t.yaml")
            return nil
        } catch {
            return error.description
        }
    }

    @Test func scalarsAreKeptAsWritten() throws {
        let values = try parse("tick-hz: 10\nfleet-hz: 0.5\nend-after: 30m\nlisten: 127.0.0.1:8080\nsync: 'full'\njwt-secret: \"a#b\"  # a comment\n")
        #expect(values == ["tick-hz": ["10"], "fleet-hz": ["0.5"], "end-after": ["30m"], "listen": ["127.0.0.1:8080"], "sync": ["full"], "jwt-secret": ["a#b"]])
    }

    @Test func listsInFlowAndBlockStyle() throws {
        let values = try parse("allow-origin: [https://a.example, https://b.example]\nwebhook:\n  - http://x/1\n  - http://x/2\n")
        #expect(values["allow-origin"] == ["https://a.example", "https://b.example"])
        #expect(values["webhook"] == ["http://x/1", "http://x/2"])
    }

    @Test func emptyAndNullValuesAreNotSet() throws {
        let values = try parse("tick-hz:\ntls-cert: ~\ntls-key: null\ndata: ''\n")
        #expect(values == ["tick-hz": [], "tls-cert": [], "tls-key": [], "data": [""]])
    }

    /// PROTOCOL 14: a secret written with no value is an error naming it, not an open hub.
    @Test func aSecretWithoutAValueIsAnError() {
        for key in ["jwt-secret", "jwt-secret-file"] {
            for value in ["", " ~", " null", " []"] {
                #expect(failure("\(key):\(value)\n")?.contains("\(key): null, ~ or an empty value is not a secret") == true, "\(key):\(value)")
            }
        }
    }

    @Test func aFileOfCommentsSetsNothing() throws {
        #expect(try parse("# tick-hz: 10\n## prose\n").isEmpty)
        #expect(try parse("").isEmpty)
        #expect(try parse("---\n").isEmpty)
    }

    @Test func keysKeepTheirLines() throws {
        let file = try ConfigFile.parse("# header\n\ntick-hz: 10\nsync: full\n", path: "t.yaml")
        #expect(file.entries.map(\.line) == [3, 4])
    }

    @Test func errorsNameTheFileAndLine() {
        #expect(failure("tick-hz: [1\n")?.hasPrefix("--config t.yaml: line 2: ") == true)
        #expect(failure("- a\n- b\n") == "--config t.yaml: line 1: the file must be a mapping of flag names to values (tick-hz: 10)")
        #expect(failure("tick-hz: 1\ntick-hz: 2\n") == "--config t.yaml: line 2: tick-hz is set twice")
        #expect(failure("limits:\n  max-body: 1\n") == "--config t.yaml: line 2: limits: expected a value or a list of values, not a mapping")
        #expect(failure("a: &x 1\nb: *x\n") == "--config t.yaml: line 2: b: aliases (*name) are not supported in a config file")
        #expect(failure("allow-origin: [a, [b]]\n") == "--config t.yaml: line 1: allow-origin: a list may hold only values")
        #expect(failure("a: 1\n---\nb: 2\n") == "--config t.yaml: line 2: only one YAML document is read; remove the second")
    }
}

@Suite struct FlagsConfigTests {
    func withFile(_ text: String, _ body: (String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trackhub-flags-\(UUID().uuidString).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    @Test func flagsWinOverEnvironmentWhichWinsOverTheFile() throws {
        try withFile("tick-hz: 5\nfleet-hz: 2\nsync: full\n") { path in
            let flags = try Flags(
                arguments: ["--config", path, "--tick-hz", "7"], known: ["config", "tick-hz", "fleet-hz", "sync"],
                environment: ["TRACKHUB_TICK_HZ": "6", "TRACKHUB_FLEET_HZ": "3"])
            #expect(flags.string("tick-hz") == "7")
            #expect(flags.string("fleet-hz") == "3")
            #expect(flags.string("sync") == "full")
        }
    }

    @Test func theFileCanBeNamedByTheEnvironment() throws {
        try withFile("sync: full\n") { path in
            let flags = try Flags(arguments: [], known: ["config", "sync"], environment: ["TRACKHUB_CONFIG": path])
            #expect(flags.string("sync") == "full")
        }
    }

    @Test func aListIsJoinedAsItsEnvironmentVariableWouldBe() throws {
        try withFile("allow-origin: [https://a.example, https://b.example]\n") { path in
            let flags = try Flags(arguments: ["--config", path], known: ["config", "allow-origin"], environment: [:])
            #expect(flags.string("allow-origin") == "https://a.example,https://b.example")
            #expect(flags.all("allow-origin") == ["https://a.example", "https://b.example"])
        }
    }

    @Test func anUnknownKeyIsAnErrorNamingIt() throws {
        try withFile("sync: full\ntick_hz: 5\n") { path in
            let error = #expect(throws: UsageError.self) {
                _ = try Flags(arguments: ["--config", path], known: ["config", "sync", "tick-hz"], environment: [:])
            }
            #expect(error?.description == "--config \(path): line 2: unknown key tick_hz")
        }
    }

    @Test func aBadValueFromTheFileNamesTheFlagAndTheLine() throws {
        try withFile("\ntick-hz: 70\n") { path in
            let flags = try Flags(arguments: ["--config", path], known: ["config", "tick-hz"], environment: [:])
            let error = #expect(throws: UsageError.self) { try flags.int("tick-hz", range: 1...60) }
            #expect(error?.description == "--tick-hz (\(path) line 2): 70 is not an integer within 1–60")
        }
    }

    @Test func anUnreadableFileIsAnErrorNamingIt() {
        let error = #expect(throws: UsageError.self) {
            _ = try Flags(arguments: ["--config", "/nonexistent/trackhub.yaml"], known: ["config"], environment: [:])
        }
        #expect(error?.description == "--config: cannot read /nonexistent/trackhub.yaml: No such file or directory")
    }
}

@Suite struct SecretListTests {
    @Test func oneOrTwoSecrets() throws {
        let new = String(repeating: "n", count: 16), old = String(repeating: "o", count: 32)
        #expect(try SecretList.split(new, label: "--jwt-secret") == [new])
        #expect(try SecretList.split("\(new),\(old)", label: "--jwt-secret") == [new, old])
        #expect(throws: UsageError.self) { try SecretList.split("a,b,c", label: "--jwt-secret") }
        #expect(throws: UsageError.self) { try SecretList.split("a,", label: "--jwt-secret") }
        #expect(throws: UsageError.self) { try SecretList.split("", label: "--jwt-secret") }
    }

    /// PROTOCOL 14: under 16 bytes a secret is refused, naming the rule and not the secret.
    @Test func aSecretUnder16BytesIsRefused() {
        for text in ["abc", "a,b", String(repeating: "x", count: 15), String(repeating: "y", count: 32) + ",short"] {
            do {
                _ = try SecretList.split(text, label: "--jwt-secret")
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.description.contains("at least 16 bytes"))
                #expect(!error.description.contains(text))
            }
        }
    }

    @Test func aFileLosesOneTrailingNewlineOnly() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trackhub-secret-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for (content, expected) in [("s3cret\n", "s3cret"), ("s3cret\r\n", "s3cret"), ("s3cret\n\n", "s3cret\n"), ("s3cret", "s3cret")] {
            try content.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try SecretList.read(file: path, label: "--jwt-secret-file") == expected)
        }
    }
}
