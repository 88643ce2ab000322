import Testing

/// The fuzz targets' harnesses reach what they fuzz: FuzzServerAPI's seeds are answered, not refused at the door,
/// whichever way they authenticate (a harness that only ever got 401 would fuzz nothing but the token check).
@Suite("Fuzz target harnesses", .timeLimit(.minutes(2)))
struct FuzzTargetReplayTests {
    /// `flags` then path, query, body, authorization, X-Forge-Now and Host, as FuzzServerAPI's seeds are written.
    static func request(_ flags: UInt8, _ fields: [String]) -> [UInt8] { [flags] + Array(fields.joined(separator: "\u{0}").utf8) }

    @Test("A Server API seed is answered 200 without auth, with the minted token and with claims signed by the harness; a raw bad token is 401")
    func serverAPI() {
        let claims = #"{"alg":"ES256","kid":"{kid}","typ":"JWT"}"# + "\u{1}" + #"{"iss":"{iss}","iat":{now},"exp":{exp},"aud":"appstoreconnect-v1","bid":"com.example.api"}"#
        #expect(FuzzTargetReplays.serverAPI(Self.request(0, ["transactionInfo/{tx}", "", "", "", "", ""])) == 200)
        #expect(FuzzTargetReplays.serverAPI(Self.request(1 << 3, ["transactionInfo/{tx}", "", "", "", "", ""])) == 200)
        #expect(FuzzTargetReplays.serverAPI(Self.request(2 << 3 | 1 << 6, ["transactionHistory/{sotx}", "sort=DESCENDING", "", claims, "", ""])) == 200)
        #expect(FuzzTargetReplays.serverAPI(Self.request(3 << 3, ["transactionInfo/{tx}", "", "", "Bearer a.b.c", "", ""])) == 401)
    }
}
