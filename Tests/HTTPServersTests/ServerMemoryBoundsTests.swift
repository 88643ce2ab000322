import Foundation
import _ForgeSupport
import StoreServer
import StoreModel
import Testing

/// What a client sends is held bounded in bytes, not only in count: a stored consumption report keeps Apple's
/// members only, a product id is Apple-sized, and every request log entry and the log's ring are cut to their bounds.
@Suite("Memory bounded in bytes: stored bodies, product ids, the request log", .timeLimit(.minutes(2)))
struct ServerMemoryBoundsTests {
    /// 30 MB: what the probe sent as an extra member and as a product id.
    static let huge = String(repeating: "x", count: 30_000_000)

    @Test("A consumption report keeps only the members of Apple's ConsumptionRequest (v1 and v2), whatever else the body holds")
    func consumptionKeepsApplesMembers() throws {
        let scenario = try StateFixtures.sandboxCustomer()
        let lifetime = try #require(try StateFixtures.ids(scenario)["lifetime"]?.first)
        let store = RecordingStore()
        let service = try StateFixtures.service([scenario], store: store)
        let v2 = #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","junk":"\#(Self.huge)","more":{"a":[1,2,3]}}"#
        let accepted = StateFixtures.call(service, .consumptionV2, "\(lifetime)", body: v2)
        #expect(accepted.status == 202)
        let v1 =
            #"{"customerConsented":true,"consumptionStatus":1,"platform":1,"sampleContentProvided":false,"deliveryStatus":0,"appAccountToken":"","accountTenure":3,"playTime":2,"lifetimeDollarsRefunded":0,"lifetimeDollarsPurchased":4,"userStatus":1,"refundPreference":"\#(String(repeating: "y", count: 100_000))","junk":1}"#
        #expect(StateFixtures.call(service, .consumptionV1, "\(lifetime)", body: v1).status == 202)
        let reports = store.written.flatMap { $0 }.compactMap { change -> ServerState.ConsumptionReport? in
            if case .consumption(let report) = change { return report }
            return nil
        }
        try #require(reports.count == 2)
        #expect(reports[0].body.objectValue?.keys == ["customerConsented", "sampleContentProvided", "deliveryStatus", "refundPreference"])
        #expect(
            reports[1].body.objectValue?.keys == [
                "customerConsented", "consumptionStatus", "platform", "sampleContentProvided", "deliveryStatus", "appAccountToken", "accountTenure",
                "playTime", "lifetimeDollarsRefunded", "lifetimeDollarsPurchased", "userStatus", "refundPreference",
            ])
        for report in reports { #expect(report.body.serialized(pretty: false).utf8.count < 1024, "a kept report is small whatever was sent") }
        #expect(reports[1].body["refundPreference"]?.stringValue?.hasSuffix("(cut at 64 bytes of 100000)") == true)
        // The log line is what was kept.
        #expect(accepted.summary["consumption"]?["junk"] == nil)
    }

    @Test("A 30 MB productId is refused (4000023) and nothing is kept: mass extension and its status, the history filter")
    func productIDIsAppleSized() throws {
        let scenario = try StateFixtures.sandboxCustomer()
        let first = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        let store = RecordingStore()
        let service = try StateFixtures.service([scenario], store: store)
        let before = store.written.count
        let mass = #"{"extendByDays":3,"extendReasonCode":1,"requestIdentifier":"R1","productId":"\#(Self.huge)"}"#
        let answer = StateFixtures.call(service, .massExtendRenewalDate, body: mass)
        #expect(answer.status == 400 && StateFixtures.json(answer)?["errorCode"]?.integerValue == 4_000_023)
        #expect(store.written.count == before, "nothing was written")
        let long = String(repeating: "p", count: 257)
        let status = StateFixtures.call(service, .massExtensionStatus, "\(long)", "R1")
        #expect(StateFixtures.json(status)?["errorCode"]?.integerValue == 4_000_023)
        let history = StateFixtures.call(service, .transactionHistory, "\(first)", query: "productId=\(long)")
        #expect(StateFixtures.json(history)?["errorCode"]?.integerValue == 4_000_023)
        // At the bound it is a product id like any other.
        let atBound = String(repeating: "p", count: 256)
        let accepted = StateFixtures.call(
            service, .massExtendRenewalDate, body: #"{"extendByDays":3,"extendReasonCode":1,"requestIdentifier":"R1","productId":"\#(atBound)"}"#)
        #expect(accepted.status == 200)
    }

    @Test("A log entry of a 60 KB path is cut, with a note of its length, whichever route built it")
    func logEntryIsCut() throws {
        let log = try RequestLog(file: nil, capacity: 10)
        let path = "/inApps/v1/transactions/" + String(repeating: "9", count: 60_000)
        log.record([("endpoint", .string("unknown")), ("path", .string(path)), ("note", .string("no Server API endpoint at \(path)"))])
        let line = try #require(log.jsonLines.split(separator: "\n").first)
        #expect(line.utf8.count < 3 * 1024, "one line: \(line.utf8.count) bytes")
        let entry = try #require(try? JSONValue(parsing: Array(line.utf8)))
        #expect(entry["path"]?.stringValue?.hasSuffix("… (cut at 1024 bytes of 60024)") == true)
        #expect(entry["note"]?.stringValue?.hasPrefix("no Server API endpoint at /inApps/v1/transactions/999") == true)
        // Values nested in the entry are cut too: a long array and a deep object.
        log.record([("list", .array(Array(repeating: .integer(1), count: 1000))), ("deep", .object([("a", .object([("b", .object([("c", .object([("d", .string("e"))]))]))]))]))])
        let second = try #require(log.jsonLines.split(separator: "\n").last.flatMap { try? JSONValue(parsing: Array($0.utf8)) })
        #expect(second["list"]?.arrayValue?.count == 65)
        #expect(second["deep"]?["a"]?["b"]?["c"]?.stringValue?.hasPrefix("…") == true)
    }

    @Test("The ring is bounded in bytes: long entries push the oldest out before the entry count is reached")
    func ringBoundedInBytes() throws {
        let log = try RequestLog(file: nil, capacity: 10_000)
        let member = String(repeating: "z", count: 1000)
        let entry: JSONObject = JSONObject((0..<12).map { ("m\($0)", JSONValue.string(member)) })
        for _ in 0..<2_000 { log.record(entry) }
        let text = log.jsonLines
        #expect(log.evicted > 0, "2,000 entries of 12 KB each are more than the ring holds in bytes")
        #expect(text.utf8.count <= 16 << 20)
        #expect(log.recorded == 2_000 && text.split(separator: "\n").count + log.evicted == 2_000)
    }
}
