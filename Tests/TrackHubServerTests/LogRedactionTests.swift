import Testing
@testable import TrackHubServer

/// PROTOCOL 14: no log line holds a token or a secret (LogRedaction).
@Suite struct LogRedactionTests {
    static let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzY29wZSI6ImFkbWluIiwiZXhwIjo5OTk5OTk5OTk5fQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"

    @Test func queryTokensAreRedacted() {
        #expect(LogRedaction.redact("GET /v1/ws?token=abc123&x=1") == "GET /v1/ws?token=[redacted]&x=1")
        #expect(LogRedaction.redact("uri /v1/ws?access_token=abc") == "uri /v1/ws?access_token=[redacted]")
        #expect(LogRedaction.redact("TOKEN=Zz9") == "TOKEN=[redacted]")
        #expect(LogRedaction.redact("jwt-secret=hunter2, next") == "jwt-secret=[redacted], next")
    }

    @Test func bearerValuesAreRedacted() {
        #expect(LogRedaction.redact("Authorization: Bearer not-a-jwt") == "Authorization: Bearer [redacted]")
        #expect(LogRedaction.redact("authorization: bearer   x.y") == "authorization: bearer   [redacted]")
        // Not the word on its own, nor inside another word.
        #expect(LogRedaction.redact("the bearer of bad news") == "the bearer [redacted] bad news")
        #expect(LogRedaction.redact("forbearer x") == "forbearer x")
    }

    @Test func jwtsAreRedactedWherever() {
        #expect(LogRedaction.redact("path=/v1/trips/\(Self.jwt)/trail") == "path=/v1/trips/[redacted]/trail")
        #expect(LogRedaction.redact(Self.jwt) == "[redacted]")
        let noJSONHeader = String(repeating: "A", count: 16) + "." + String(repeating: "b", count: 20) + "." + String(repeating: "c", count: 43)
        #expect(LogRedaction.redact("x \(noJSONHeader) y") == "x [redacted] y")
    }

    @Test func jsonTokenFieldsAreRedacted() {
        #expect(LogRedaction.redact(#"{"op":"hello","token":"garbage"}"#) == #"{"op":"hello","token":"[redacted]"}"#)
        #expect(LogRedaction.redact(#"{"token" : "a\"b", "id":1}"#) == #"{"token" : "[redacted]", "id":1}"#)
    }

    @Test func literalSecretsAreRedacted() {
        let secret = "correct-horse-battery-staple-0123456789"
        #expect(LogRedaction.redact("secret is \(secret)!", secrets: [secret, "other"]) == "secret is [redacted]!")
    }

    @Test func ordinaryLinesAreLeftAlone() {
        for line in [
            "http request method=GET path=/v1/trips status=200 duration_s=0.000412 peer=127.0.0.1",
            "listening on http://trackhub.example.com:8080",
            "cluster snapshot not written: timeout",
            "token refused reason=\"bad signature\"",
            "the data directory /var/lib/trackhub-data/trackhub.sqlite is locked",
        ] {
            #expect(LogRedaction.redact(line) == line)
        }
    }
}
