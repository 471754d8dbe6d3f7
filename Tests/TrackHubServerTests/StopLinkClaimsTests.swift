import Foundation
import Testing
@testable import TrackHubServer

/// PROTOCOL 17's link for one stop, in its token: the `stop` and `visible_within_stops` claims.
@Suite struct StopLinkClaimsTests {
    let secret = "s3cret"
    let now: Int64 = 1_760_000_000_000
    var nowS: Int64 { now / 1000 }

    func signed(_ json: String) -> String { JWT.sign(payload: Array(json.utf8), secret: secret) }

    @Test func aMintedStopLinkCarriesBothClaimsIntoItsGrants() throws {
        let claims = TokenClaims(subject: "share:T1", expiresAt: nowS + 60, scopes: [.share], trips: ["T1"], jti: "J1",
                                 stop: "order-7", visibleWithinStops: 2)
        let verified = try JWT.verify(JWT.mint(claims, secret: secret), secret: secret, nowMs: now).get()
        #expect(verified.stop == "order-7" && verified.visibleWithinStops == 2)
        let grants = Grants(claims: verified)
        #expect(grants.shareStop == "order-7" && grants.visibleWithinStops == 2)
    }

    @Test func aLinkWithoutAStopMintsNeitherClaim() throws {
        let claims = TokenClaims(subject: "share:T1", expiresAt: nowS + 60, scopes: [.share], trips: ["T1"], jti: "J1")
        let token = JWT.mint(claims, secret: secret)
        let payload = try #require(Base64URL.decode(token.split(separator: ".")[1].utf8))
        let text = String(decoding: payload, as: UTF8.self)
        #expect(!text.contains("stop"))
        #expect(Grants(claims: try JWT.verify(token, secret: secret, nowMs: now).get()).shareStop == nil)
    }

    @Test func aTokenSignedElsewhereWithoutVisibleWithinStopsCountsZero() throws {
        let token = signed(#"{"exp":\#(nowS + 60),"scope":["share"],"trips":["T1"],"jti":"J1","stop":"destination"}"#)
        let verified = try JWT.verify(token, secret: secret, nowMs: now).get()
        #expect(verified.stop == "destination" && verified.visibleWithinStops == 0)
    }

    @Test func onlyAShareTokensStopReachesItsGrants() throws {
        let token = signed(#"{"exp":\#(nowS + 60),"scope":["viewer"],"trips":["T1"],"stop":"a","visible_within_stops":3}"#)
        let grants = Grants(claims: try JWT.verify(token, secret: secret, nowMs: now).get())
        #expect(grants.shareStop == nil && grants.visibleWithinStops == 0)
    }

    @Test func malformedStopClaimsAreRefused() {
        for claims in [#""stop":7"#, #""stop":"a","visible_within_stops":-1"#, #""stop":"a","visible_within_stops":101"#,
                       #""stop":"a","visible_within_stops":1.5"#, #""stop":"a","visible_within_stops":"2""#] {
            let token = signed(#"{"exp":\#(nowS + 60),"scope":["share"],"trips":["T1"],"jti":"J1",\#(claims)}"#)
            #expect(throws: TokenError.self, "\(claims)") { try JWT.verify(token, secret: secret, nowMs: now).get() }
        }
    }
}
