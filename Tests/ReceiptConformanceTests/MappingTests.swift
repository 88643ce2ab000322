import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing
import _ForgeSupport
import ForgeTestSupport

@Suite("Response mappings and shards", .timeLimit(.minutes(2)))
struct MappingTests {
    let request = ValidateRequest(
        seq: 3, id: "binding::wrong-bundle-id", base64: "AAEC",
        context: Context(now: "2025-06-15T12:00:00Z", trustAnchor: "forge-root", bundleId: "com.example.app"))

    @Test("verifyreceipt: the body carries receipt-data, an absent password is left out, headers carry the context")
    func verifyReceiptRequest() throws {
        let (path, headers, body) = ResponseMapping.verifyReceipt.request(for: request, password: nil, environment: [:])
        #expect(path == "")
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["receipt-data"] as? String == "AAEC")
        #expect(object["password"] == nil)
        #expect(object["exclude-old-transactions"] as? Bool == false)
        let named = Dictionary(headers, uniquingKeysWith: { first, _ in first })
        #expect(named["X-Forge-Now"] == "2025-06-15T12:00:00Z" && named["X-Forge-Bundle-Id"] == "com.example.app")
        #expect(named["X-Forge-Device-Id"] == nil, "a header whose placeholder has no value is not sent")
        let (_, _, withSecret) = ResponseMapping.verifyReceipt.request(for: request, password: "s3cret", environment: [:])
        #expect(String(decoding: withSecret, as: UTF8.self).contains(#""password":"s3cret""#))
    }

    @Test("verifyreceipt statuses: 0 and 21006 accept, 21003 rejects as signature, 21005 and unknown codes are the endpoint's errors")
    func verifyReceiptStatuses() {
        let mapping = ResponseMapping.verifyReceipt
        #expect(mapping.reply(seq: 3, httpStatus: 200, body: Data(#"{"status":0}"#.utf8)) == .result(seq: 3, verdict: .accept, errorClass: nil, message: nil, decoded: nil))
        #expect(mapping.reply(seq: 3, httpStatus: 200, body: Data(#"{"status":21006}"#.utf8)) == .result(seq: 3, verdict: .accept, errorClass: nil, message: nil, decoded: nil))
        guard case .result(3, .reject, "signature", _, _) = mapping.reply(seq: 3, httpStatus: 200, body: Data(#"{"status":21003}"#.utf8)) else {
            Issue.record("21003 is a reject with class signature")
            return
        }
        guard case .result(3, .reject, "binding.environment", _, _) = mapping.reply(seq: 3, httpStatus: 200, body: Data(#"{"status":21007}"#.utf8)) else {
            Issue.record("21007 is a reject with class binding.environment")
            return
        }
        for body in [#"{"status":21005}"#, #"{"status":12345}"#, #"{"state":0}"#, "<html>", ""] {
            guard case .errored(3, let message) = mapping.reply(seq: 3, httpStatus: 200, body: Data(body.utf8)) else {
                Issue.record("\(body) is an error of the endpoint, not a verdict")
                continue
            }
            #expect(!message.isEmpty)
        }
        guard case .errored(3, let message) = mapping.reply(seq: 3, httpStatus: 503, body: Data(#"{"status":0}"#.utf8)) else {
            Issue.record("HTTP 503 is never an accept")
            return
        }
        #expect(message.contains("503"))
    }

    @Test("A mapping file: nested pointers, @status, env placeholders, a finer error class, and refusals of contradictions")
    func mappingFile() throws {
        let mapping = try ResponseMapping.load(
            Data(
                """
                {"mappingVersion": 1, "name": "acme",
                 "request": {"path": "/v1/check", "headers": {"Authorization": "Bearer {{env:TOKEN}}"}, "body": {"r": "{{receipt}}", "ctx": ["{{bundleId}}", "{{deviceId}}"]}},
                 "response": {"verdict": "/result/ok", "accept": ["true"], "reject": {"false": "binding"}, "errorClass": "/result/why", "message": "/result/detail"},
                 "granularity": "coarse"}
                """.utf8))
        let (path, headers, body) = mapping.request(for: request, password: nil, environment: ["TOKEN": "t0k"])
        #expect(path == "/v1/check")
        #expect(headers.first { $0.0 == "Authorization" }?.1 == "Bearer t0k")
        #expect(String(decoding: body, as: UTF8.self) == #"{"ctx":["com.example.app",null],"r":"AAEC"}"#)
        #expect(
            mapping.reply(seq: 1, httpStatus: 200, body: Data(#"{"result":{"ok":false,"why":"binding.bundle-id","detail":"other app"}}"#.utf8))
                == .result(seq: 1, verdict: .reject, errorClass: "binding.bundle-id", message: "other app", decoded: nil))
        #expect(
            mapping.reply(seq: 1, httpStatus: 200, body: Data(#"{"result":{"ok":false}}"#.utf8))
                == .result(seq: 1, verdict: .reject, errorClass: "binding", message: "/result/ok = false", decoded: nil))

        let byStatus = try ResponseMapping.load(
            Data(
                """
                {"mappingVersion": 1, "name": "s", "request": {"body": {"r": "{{receipt}}"}},
                 "response": {"verdict": "@status", "accept": ["200"], "reject": {"422": "", "400": "input"}}}
                """.utf8))
        #expect(byStatus.reply(seq: 2, httpStatus: 422, body: Data("nope".utf8)) == .result(seq: 2, verdict: .reject, errorClass: nil, message: "@status = 422", decoded: nil))
        guard case .errored = byStatus.reply(seq: 2, httpStatus: 500, body: Data()) else {
            Issue.record("an unlisted HTTP status is an error")
            return
        }

        #expect(throws: ConformanceError.self) {
            try ResponseMapping.load(Data(#"{"mappingVersion":1,"name":"x","request":{"body":{}},"response":{"verdict":"/s","accept":["0"],"reject":{"0":""}}}"#.utf8))
        }
        #expect(throws: ConformanceError.self) {
            try ResponseMapping.load(Data(#"{"mappingVersion":1,"name":"x","request":{"body":{}},"response":{"verdict":"status","accept":["0"],"reject":{}}}"#.utf8))
        }
        #expect(throws: ConformanceError.self) { try ResponseMapping.load(Data("{}".utf8)) }
    }

    @Test("Typos are refused, not silently sent as nothing: unknown keys and placeholders name themselves")
    func typos() throws {
        func refusal(_ json: String) -> String {
            do { _ = try ResponseMapping.load(Data(json.utf8)) } catch { return error.message }
            return "accepted"
        }
        let response = #""response":{"verdict":"/status","accept":["0"],"reject":{}}"#
        #expect(refusal(#"{"mappingVersion":1,"name":"x","request":{"body":{"r":"{{reciept}}"}},\#(response)}"#).contains("{{reciept}}"))
        #expect(refusal(#"{"mappingVersion":1,"name":"x","request":{"body":{},"header":{}},\#(response)}"#).contains("request.header"))
        #expect(refusal(#"{"mappingVersion":1,"name":"x","granularty":"fine","request":{"body":{}},\#(response)}"#).contains("granularty"))
        #expect(refusal(#"{"mappingVersion":1,"name":"x","request":{"path":"/{{env:}}","body":{}},\#(response)}"#).contains("{{env:}}"))
        #expect(refusal(#"{"mappingVersion":1,"name":"x","request":{"headers":{"A":"{{env:TOKEN}}"},"body":{"n":"{{now}}"}},\#(response)}"#) == "accepted")
    }

    @Test("An endpoint judges at the vector's time only if the request sends {{now}}, unless the mapping says otherwise")
    func clockInjection() throws {
        let response = #""response":{"verdict":"/status","accept":["0"],"reject":{}}"#
        let withNow = try ResponseMapping.load(Data(#"{"mappingVersion":1,"name":"x","request":{"path":"/at/{{now}}","body":{}},\#(response)}"#.utf8))
        let without = try ResponseMapping.load(Data(#"{"mappingVersion":1,"name":"x","request":{"body":{"r":"{{receipt}}"}},\#(response)}"#.utf8))
        let declared = try ResponseMapping.load(Data(#"{"mappingVersion":1,"name":"x","clockInjection":true,"request":{"body":{}},\#(response)}"#.utf8))
        #expect(withNow.judgesAtContextTime && !without.judgesAtContextTime && declared.judgesAtContextTime)
        #expect(ResponseMapping.verifyReceipt.judgesAtContextTime)
    }

    @Test("Target commands split like shell words, without expansion")
    func commandWords() throws {
        #expect(try CommandWords.split("./harness --flag") == ["./harness", "--flag"])
        #expect(try CommandWords.split(#"python3 '/my dir/h.py'  "a \"b\" c" d\ e '' $HOME"#) == ["python3", "/my dir/h.py", #"a "b" c"#, "d e", "", "$HOME"])
        #expect(try CommandWords.split(#"say "back\slash" 'it''s'"#) == ["say", #"back\slash"#, "its"])
        #expect(throws: ConformanceError(.invalidCommand, "")) { try CommandWords.split("python3 'unterminated") }
        #expect(throws: ConformanceError(.invalidCommand, "")) { try CommandWords.split("   ") }
        #expect(throws: ConformanceError(.invalidCommand, "")) { try CommandWords.split("ends with \\") }
    }

    @Test("examples/mapping.json, the README's example, is a valid mapping")
    func exampleMapping() throws {
        let mapping = try ResponseMapping.load(Data(contentsOf: Repository.file("examples/mapping.json")))
        #expect(mapping.name == "acme" && mapping.granularity == .coarse)
        #expect(
            mapping.reply(seq: 0, httpStatus: 200, body: Data(#"{"result":{"status":"expired"}}"#.utf8))
                == .result(seq: 0, verdict: .reject, errorClass: "policy", message: "/result/status = expired", decoded: nil))
    }

    @Test("Shards: k/n parsing, a partition of ids, and membership fixed by the id alone")
    func shards() throws {
        #expect(Shard("0/3") == nil && Shard("4/3") == nil && Shard("a/b") == nil && Shard("1/0") == nil && Shard("2") == nil)
        let shards = (1...4).map { Shard("\($0)/4")! }
        let ids = (0..<400).map { "family::vector-\($0)" }
        for id in ids { #expect(shards.filter { $0.contains(id) }.count == 1) }
        let sizes = shards.map { shard in ids.filter(shard.contains).count }
        #expect(sizes.allSatisfy { $0 > 60 }, "\(sizes)")
        // Computed independently (Python: int.from_bytes(sha256(id)[:8], 'big') % 7 + 1), so a change of hashing is noticed.
        let pinned = (1...7).first { Shard("\($0)/7")!.contains("valid::appstore-minimal") }
        #expect(pinned == 2)
    }
}
