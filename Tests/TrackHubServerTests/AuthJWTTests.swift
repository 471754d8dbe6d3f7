import Foundation
import Testing
import TrackHubCrypto
@testable import TrackHubServer

/// HS256 tokens (PROTOCOL section 2): what verifies and what does not.
@Suite struct AuthJWTTests {
    let secret = "s3cret"
    let now: Int64 = 1_760_000_000_000
    var nowS: Int64 { now / 1000 }

    func claims(exp: Int64? = nil, scopes: Set<TokenScope> = [.viewer], trips: Set<String>? = ["T1"]) -> TokenClaims {
        TokenClaims(subject: "u1", expiresAt: exp ?? nowS + 3600, scopes: scopes, trips: trips)
    }

    func payload(_ json: String) -> [UInt8] { Array(json.utf8) }

    @Test func mintedTokenVerifiesWithItsClaims() throws {
        let token = JWT.mint(claims(scopes: [.viewer, .courier], trips: ["T1", "T2"]), secret: secret, issuedAt: nowS)
        let verified = try JWT.verify(token, secret: secret, nowMs: now).get()
        #expect(verified.subject == "u1")
        #expect(verified.scopes == [.viewer, .courier])
        #expect(verified.trips == ["T1", "T2"])
        #expect(verified.expiresAt == nowS + 3600)
    }

    @Test func rfc7515ExampleA1VerifiesAtItsTime() throws {
        // RFC 7515 appendix A.1: an HS256 JWS with a 64-byte key.
        let key = try #require(Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let verified = try JWT.verify(token, secret: key, nowMs: 1_300_819_380_000).get()
        #expect(verified.expiresAt == 1_300_819_380)
        #expect(verified.scopes.isEmpty && verified.trips == [])
        // One bit off in the signature, or the same token much later: rejected.
        #expect(throws: TokenError.self) { try JWT.verify(String(token.dropLast()) + "j", secret: key, nowMs: 1_300_819_380_000).get() }
        #expect(throws: TokenError.self) { try JWT.verify(token, secret: key, nowMs: 1_300_819_500_000).get() }
    }

    @Test func expiryHasThirtySecondsOfLeeway() {
        let token = JWT.mint(claims(exp: nowS - 30), secret: secret)
        #expect((try? JWT.verify(token, secret: secret, nowMs: now).get()) != nil)
        #expect((try? JWT.verify(token, secret: secret, nowMs: now + 1).get()) == nil)
        let expired = JWT.verify(JWT.mint(claims(exp: nowS - 31), secret: secret), secret: secret, nowMs: now)
        #expect(expired == .failure(TokenError("token expired (exp \(nowS - 31))")))
    }

    @Test func rejectedTokensNameWhatIsWrong() {
        let good = JWT.mint(claims(), secret: secret)
        let parts = good.split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            ("", "empty"),
            ("abc", "not a JWT"),
            ("a.b", "not a JWT"),
            ("a.b.c.d", "not a JWT"),
            (".\(parts[1]).\(parts[2])", "not a JWT"),
            (good + "=", "base64url"),
            (parts[0] + "=." + parts[1] + "." + parts[2], "base64url"),
            (parts[0] + ".\(parts[1]) ." + parts[2], "base64url"),
            (JWT.mint(claims(), secret: "other"), "signature"),
            (parts[0] + "." + parts[1] + ".", "signature"),
            (parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(4)), "signature"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60)}"#), secret: secret, header: #"{"alg":"none"}"#), "alg none"),
            (Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + ".", "alg none"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60)}"#), secret: secret, header: #"{"alg":"HS512"}"#), "HS512"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60)}"#), secret: secret, header: #"{"alg":"hs256"}"#), "hs256"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60)}"#), secret: secret, header: #"{"typ":"JWT"}"#), "no alg"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60)}"#), secret: secret, header: #"{"alg":"HS256","crit":["b64"]}"#), "crit"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60)}"#), secret: secret, header: #"["HS256"]"#), "header"),
            (JWT.sign(payload: payload(#"{"scope":["admin"]}"#), secret: secret), "no exp"),
            (JWT.sign(payload: payload(#"{"exp":"\#(nowS + 60)"}"#), secret: secret), "exp"),
            (JWT.sign(payload: payload(#"{"exp":null}"#), secret: secret), "exp"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60),"scope":"admin"}"#), secret: secret), "scope"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60),"scope":[1]}"#), secret: secret), "scope"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60),"trips":"*"}"#), secret: secret), "trips"),
            (JWT.sign(payload: payload(#"{"exp":\#(nowS + 60),"sub":7}"#), secret: secret), "sub"),
            (JWT.sign(payload: payload(#"[1]"#), secret: secret), "payload"),
            (JWT.sign(payload: payload(#"{"exp":1e999}"#), secret: secret), "payload"),
            (String(repeating: "a", count: JWT.maxTokenBytes + 1), "longer"),
        ]
        for (token, why) in cases {
            let result = JWT.verify(token, secret: secret, nowMs: now)
            guard case .failure(let error) = result else {
                Issue.record("accepted a token that is bad because: \(why)")
                continue
            }
            #expect(error.message.hasPrefix("token"), "message must name the token: \(error.message)")
        }
    }

    @Test func scopesAndTripsAreReadAsTheProtocolSays() throws {
        func verify(_ json: String) throws -> TokenClaims {
            try JWT.verify(JWT.sign(payload: payload(json), secret: secret), secret: secret, nowMs: now).get()
        }
        let star = try verify(#"{"exp":\#(nowS + 60),"scope":["viewer","superuser"],"trips":["*"]}"#)
        #expect(star.scopes == [.viewer] && star.trips == nil)
        let none = try verify(#"{"exp":\#(nowS + 60)}"#)
        #expect(none.scopes.isEmpty && none.trips == [])
        let fractional = try verify(#"{"exp":\#(nowS + 60).9,"iat":"ignored","nbf":"ignored too"}"#)
        #expect(fractional.expiresAt == nowS + 60)
        let huge = try verify(#"{"exp":1e300}"#)
        #expect(!JWT.isExpired(expiresAt: huge.expiresAt, nowMs: now))
    }

    @Test func grantsFollowTheScopeTable() throws {
        let viewer = Grants(claims: claims(scopes: [.viewer], trips: ["T1"]))
        #expect(viewer.allowsViewing("T1") && !viewer.allowsViewing("T2") && !viewer.allowsDriving("T1"))
        #expect(!viewer.allowsFleet && !viewer.allowsAdministering && viewer.allowsListing("T1") && !viewer.allowsListing("T2"))
        let courier = Grants(claims: claims(scopes: [.courier], trips: nil))
        #expect(courier.allowsDriving("anything") && courier.allowsViewing("anything") && !courier.allowsFleet)
        // trips is ignored for fleet: the whole fleet and list, but no trip's stream.
        let fleet = Grants(claims: claims(scopes: [.fleet], trips: []))
        #expect(fleet.allowsFleet && fleet.allowsListing("T9") && !fleet.allowsViewing("T9") && !fleet.allowsDriving("T9"))
        // ... and fleet does not widen another scope's trips.
        let mixed = Grants(claims: claims(scopes: [.fleet, .courier], trips: ["T1"]))
        #expect(mixed.allowsDriving("T1") && !mixed.allowsDriving("T2"))
        let admin = Grants(claims: claims(scopes: [.admin], trips: []))
        #expect(admin.allowsAdministering && admin.allowsDriving("T9") && admin.allowsViewing("T9") && admin.allowsFleet)
    }

    @Test func constantTimeCompareAndHMACMatchKnownValues() throws {
        // RFC 4231 test case 2.
        let mac = try #require(HMACSHA256.mac(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
        #expect(mac.map { String(format: "%02x", $0) }.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.constantTimeEqual(mac, mac))
        var other = mac
        other[31] ^= 1
        #expect(!HMACSHA256.constantTimeEqual(mac, other))
        #expect(!HMACSHA256.constantTimeEqual(mac, Array(mac.prefix(31))))
    }

    @Test func base64URLIsStrict() {
        #expect(Base64URL.encode(Array("any carnal pleas".utf8)) == "YW55IGNhcm5hbCBwbGVhcw")
        #expect(Base64URL.decode("YW55IGNhcm5hbCBwbGVhcw") == Array("any carnal pleas".utf8))
        #expect(Base64URL.decode("YW55IGNhcm5hbCBwbGVhcw==") == nil)
        #expect(Base64URL.decode("YW55+GNh") == nil)
        #expect(Base64URL.decode("YW55IGNhcm5hbCBwbGVhcx") == nil)  // non-zero spare bits
        #expect(Base64URL.decode("Y") == nil)
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }
}
