import Foundation
import _ForgeSupport
import StoreServer
import StoreModel
import Testing

/// `X-Forge-Now` sets the clock one request reads at; a change is never dated behind the server clock, and the
/// rate limits count on a clock the client does not choose.
@Suite("Changes never move behind the server clock; rate limits on the server's own clock", .timeLimit(.minutes(2)))
struct ServerClockOrderTests {
    static let extend = #"{"extendByDays":30,"extendReasonCode":1,"requestIdentifier":"REQ"}"#

    static func extend(_ service: ServerAPIService, _ original: String, id: String, now: String? = nil) -> ServerAPIResponse {
        StateFixtures.call(service, .extendRenewalDate, "\(original)", body: extend.replacingOccurrences(of: "REQ", with: id), now: now)
    }

    @Test("A change dated before the server clock is refused (400, 4000000, X-Forge-Refused) and changes nothing: what was served is still served")
    func pastChangeRefused() throws {
        let scenario = try StateFixtures.sandboxCustomer()
        let monthly = try #require(try StateFixtures.ids(scenario)["pro.monthly"])
        let original = try #require(monthly.first)
        let latest = try #require(monthly.last)
        let service = try StateFixtures.service([scenario])
        #expect(StateFixtures.call(service, .transactionInfo, "\(latest)").status == 200)
        let refused = Self.extend(service, original, id: "past", now: "2024-11-20T00:00:00Z")
        #expect(refused.status == 400 && StateFixtures.json(refused)?["errorCode"]?.integerValue == 4_000_000)
        #expect(refused.headers.first { $0.name == "X-Forge-Refused" }?.value.contains("before the server clock") == true)
        #expect(service.state.customers[0].scenario.timeline == scenario.timeline, "nothing appended")
        #expect(StateFixtures.call(service, .transactionInfo, "\(latest)").status == 200, "the renewal served before is still there")
        let token = StateFixtures.call(
            service, .setAppAccountToken, "\(original)", body: #"{"appAccountToken":"00000000-0000-4000-8000-000000000001"}"#,
            now: "2024-12-31T23:59:59Z")
        #expect(token.status == 400)
        // At the server clock, or later, a change is made.
        #expect(Self.extend(service, original, id: "now", now: StateFixtures.clock).status == 200)
    }

    @Test("The twice-in-365-days rule counts an extension dated ahead too: no 365 days hold three")
    func twiceAYearAhead() throws {
        let scenario = try StateFixtures.sandboxCustomer()
        let original = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        let service = try StateFixtures.service([scenario])
        #expect(Self.extend(service, original, id: "ahead", now: "2025-03-01T00:00:00Z").status == 200)
        #expect(Self.extend(service, original, id: "first").status == 200)
        let third = Self.extend(service, original, id: "second")
        #expect(third.status == 403 && StateFixtures.json(third)?["errorCode"]?.integerValue == 4_030_005)
    }

    @Test("Rate limits count on the server's clock: a new X-Forge-Now for every request is no way past them")
    func rateLimitsIgnoreTheHeader() throws {
        let clock = ManualClock("2025-01-01T00:00:00Z")
        let scenario = try StateFixtures.sandboxCustomer()
        let service = try StateFixtures.service([scenario], rateLimits: clock.limits)
        // Sandbox: one mass-extension status a second.
        let first = StateFixtures.call(service, .massExtensionStatus, "pro.monthly", "R1", now: "2025-01-01T00:00:01Z")
        #expect(first.status == 404, "not found, but counted")
        for (index, clock) in ["2025-01-01T00:00:02Z", "2025-01-01T00:00:03Z", "2030-01-01T00:00:00Z"].enumerated() {
            let answer = StateFixtures.call(service, .massExtensionStatus, "pro.monthly", "R1", now: clock)
            #expect(answer.status == 429, "request \(index + 2) at X-Forge-Now \(clock)")
        }
        clock.advance(seconds: 1)
        #expect(StateFixtures.call(service, .massExtensionStatus, "pro.monthly", "R1").status == 404, "the next second of the limiter's clock")
    }
}
