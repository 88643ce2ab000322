import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing
import _ForgeSupport
import ForgeTestSupport

private func encoded(_ value: some Encodable) throws -> Data { try JSONEncoder().encode(value) }

private func descriptions(_ violations: [SchemaViolation]) -> [String] { violations.map(\.description) }

@Suite("Conformance schemas and the protocol checker", .timeLimit(.minutes(2)))
struct ConformanceSchemasTests {
    let checker: ProtocolChecker

    init() throws { checker = try ProtocolChecker() }

    @Test("Three schemas, byte-stable, and the committed Vectors/schema copies are current (run `forge vectors generate`)")
    func committedCopiesAreCurrent() throws {
        let schemas = try ConformanceSchemas.all()
        #expect(Set(schemas.keys) == ["harness-v1.schema.json", "results.schema.json", "baseline.schema.json"])
        #expect(Set(schemas.keys).isDisjoint(with: try CorpusSchemas.all().keys), "must not replace the corpus's own schemas")
        for (name, data) in schemas {
            let committed = try? Data(contentsOf: Repository.vectors.appendingPathComponent("schema/\(name)"))
            #expect(committed == data, "Vectors/schema/\(name) differs from ConformanceSchemas.all()")
            #expect(data.last == UInt8(ascii: "\n"))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["$id"] as? String == CorpusSchemas.baseID + name)
            #expect(object["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        }
    }

    @Test("Every exemplar validates against its schema, and each message only in its own direction")
    func exemplarsValidate() throws {
        let any = try ConformanceSchemas.harnessMessage
        let runnerSends: [Data] = [try encoded(RunnerHello.exemplar), try encoded(ValidateRequest.exemplar), try encoded(StopMessage.exemplar)]
        let harnessSends: [Data] = [
            try encoded(HarnessHello.exemplar), try encoded(HarnessReply.resultExemplar),
            try encoded(HarnessReply.skippedExemplar), try encoded(HarnessReply.erroredExemplar),
        ]
        for message in runnerSends + harnessSends {
            #expect(any.violations(message) == [], "\(String(decoding: message, as: UTF8.self))")
        }
        for message in runnerSends {
            #expect(checker.check(runnerMessage: message) == [])
            #expect(checker.check(harnessMessage: message) != [], "a harness must not send \(String(decoding: message, as: UTF8.self))")
        }
        for message in harnessSends {
            #expect(checker.check(harnessMessage: message) == [])
            #expect(checker.check(runnerMessage: message) != [])
        }
        #expect(try ConformanceSchemas.results.violations(encoded(RunResults.exemplar)) == [])
        #expect(try ConformanceSchemas.baseline.violations(encoded(Baseline.exemplar)) == [])
    }

    @Test("The wire forms match the protocol text: runner hello and stop")
    func runnerMessagesOnTheWire() throws {
        let hello = try #require(try JSONSerialization.jsonObject(with: encoded(RunnerHello(suite: manifest.suite.version))) as? [String: Any])
        #expect(
            hello["type"] as? String == "hello" && hello["protocol"] as? Int == HarnessProtocol.version
                && hello["suite"] as? String == manifest.suite.version && hello.count == 3)
        #expect(String(decoding: try encoded(StopMessage()), as: UTF8.self) == #"{"type":"stop"}"#)
        #expect(try JSONDecoder().decode(RunnerHello.self, from: Data(#"{"type":"hello","protocol":1,"suite":"x"}"#.utf8)).suite == "x")
    }

    @Test("Real messages validate: a validate request for every vector, every reply case, optionals absent or null")
    func realMessagesValidate() throws {
        for (seq, vector) in manifest.vectors.enumerated() {
            let bytes = try Data(contentsOf: Repository.vectors.appendingPathComponent(vector.file))
            let request = ValidateRequest(seq: seq, id: vector.id.text, base64: bytes.base64EncodedString(), context: vector.context)
            #expect(checker.check(runnerMessage: try encoded(request)) == [], "\(vector.id)")
        }
        let decoded = try #require(manifest.vectors.compactMap(\.expected.decoded).first)
        let replies: [HarnessReply] = [
            .result(seq: 0, verdict: .accept, errorClass: nil, message: nil, decoded: decoded),
            .result(seq: 1, verdict: .reject, errorClass: "chain.untrusted", message: "no", decoded: nil),
            .skipped(seq: 2, reason: "unsupported"),
            .errored(seq: 3, message: "boom"),
            .failed(seq: 4, failure: .timeout, message: "took too long"),
        ]
        for reply in replies {
            #expect(checker.check(harnessMessage: try encoded(reply)) == [], "\(reply)")
        }
        let hellos = [
            HarnessHello(implementation: "x", features: [], errorGranularity: .none),
            HarnessHello(
                implementation: "y", features: Array(manifest.features.keys), errorGranularity: .coarse, clockInjection: false,
                maxConcurrency: 16),
        ]
        for hello in hellos {
            #expect(checker.check(harnessMessage: try encoded(hello)) == [])
        }
        // What other languages write, and JSONDecoder accepts: explicit nulls for absent optionals.
        let nulls = #"{"type":"result","seq":17,"verdict":"reject","errorClass":"chain.marker-oid-missing","message":null,"decoded":null}"#
        #expect(checker.check(harnessMessage: Data(nulls.utf8)) == [])
        #expect(try JSONDecoder().decode(HarnessReply.self, from: Data(nulls.utf8)).seq == 17)
    }

    @Test("A real run's results.json and the baseline written from it validate")
    func resultsAndBaselineValidate() async throws {
        var results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors)
            .run(Constant(verdict: .reject, errorClass: "chain.untrusted"))
        #expect(results.results.count > 3)
        let resultsSchema = try ConformanceSchemas.results
        #expect(resultsSchema.violations(try encoded(results)) == [])
        let baseline = Baseline.written(from: results, keeping: nil)
        #expect(try ConformanceSchemas.baseline.violations(encoded(baseline)) == [])
        let tolerant = Baseline(
            implementation: "constant",
            entries: [
                Baseline.Entry(pattern: "chain::**", outcome: .falseReject, reason: "r", issue: "https://example.invalid/1", expires: "2000-01-01")
            ])
        _ = tolerant.apply(to: &results, today: "2026-01-01")
        #expect(results.expiredBaselineEntries == ["chain::**"])
        #expect(resultsSchema.violations(try encoded(results)) == [])
        #expect(try ConformanceSchemas.baseline.violations(encoded(tolerant)) == [])
        // Hand-written baselines may say null where an optional is absent.
        let handWritten = #"{"schemaVersion":1,"implementation":"acme","entries":[{"id":"a::b","outcome":"SKIP","reason":"r","issue":null}]}"#
        #expect(try ConformanceSchemas.baseline.violations(Data(handWritten.utf8)) == [])
    }

    @Test("Malformed harness messages give the violations a harness author needs")
    func malformedMessages() throws {
        func check(_ json: String) -> [String] { descriptions(checker.check(harnessMessage: Data(json.utf8))) }
        #expect(
            check(#"{"type":"result","seq":"1","verdict":"yes"}"#) == [
                #"/seq: expected integer, got "1""#, #"/verdict: expected one of accept, reject, got "yes""#,
            ])
        #expect(check(#"{"type":"result","seq":1,"verdict":"accept","confidence":0.9}"#) == [#"/confidence: unexpected property "confidence""#])
        #expect(check(#"{"type":"skipped","seq":1}"#) == [#"(root): missing required property "reason""#])
        #expect(check(#"{"type":"errored","seq":-1,"message":"x"}"#) == ["/seq: expected at least 0, got -1"])
        #expect(check(#"{"type":"answer","seq":1}"#) == [#"/type: expected one of hello, result, skipped, errored, got "answer""#])
        #expect(
            check(#"{"type":"result","seq":1,"verdict":"accept","decoded":{"bundleId":"a","appVersion":"1","creationDate":"d","inApp":[{}]}}"#)
                == [
                    #"/decoded/inApp/0: missing required property "productId""#, #"/decoded/inApp/0: missing required property "purchaseDate""#,
                    #"/decoded/inApp/0: missing required property "quantity""#, #"/decoded/inApp/0: missing required property "transactionId""#,
                ])
        #expect(
            check(#"{"type":"hello","protocol":1,"implementation":"x","features":[],"errorGranularity":"exact","clockInjection":"yes","maxConcurrency":0}"#) == [
                #"/clockInjection: expected boolean, got "yes""#, #"/errorGranularity: expected one of none, coarse, fine, got "exact""#,
                "/maxConcurrency: expected at least 1, got 0",
            ])
        // The runner's own hello, echoed back, is not a harness hello.
        #expect(check(#"{"type":"hello","protocol":1,"suite":"2026.11.0"}"#).contains(#"(root): missing required property "implementation""#))
        #expect(check("accept\n") == ["(root): not JSON: unexpected character at byte 0"])
    }

    @Test("Violations render as one line for the report")
    func oneLineRendering() throws {
        let violations = checker.check(harnessMessage: Data(#"{"type":"result","seq":"1","verdict":"yes"}"#.utf8))
        #expect(
            ProtocolChecker.describe(violations)
                == #"protocol violation: /seq: expected integer, got "1"; /verdict: expected one of accept, reject, got "yes""#)
        #expect(ProtocolChecker.describe([]) == "no protocol violation")
        let many = (0..<8).map { SchemaViolation(path: "/k\($0)", message: "m") }
        #expect(ProtocolChecker.describe(many).hasSuffix("/k4: m; … and 3 more"))
        let hostile = checker.check(harnessMessage: Data(#"{"type":"skipped","seq":1,"reason":"r","a\nb":1}"#.utf8))
        #expect(hostile.count == 1)
        #expect(!ProtocolChecker.describe(hostile).contains("\n"))
    }

    @Test("results.json: a wrong outcome or an unknown key is reported at its path")
    func malformedResults() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: encoded(RunResults.exemplar)) as? [String: Any])
        var results = try #require(object["results"] as? [[String: Any]])
        results.append(results[0])
        results[1]["outcome"] = "MAYBE"
        results[1]["notes"] = "x"
        object["results"] = results
        object["durationMilliseconds"] = -5
        let violations = try ConformanceSchemas.results.violations(JSONSerialization.data(withJSONObject: object))
        #expect(
            descriptions(violations) == [
                "/durationMilliseconds: expected at least 0, got -5", #"/results/1/notes: unexpected property "notes""#,
                "/results/1/outcome: expected one of \(Outcome.allCases.map(\.rawValue).joined(separator: ", ")), got \"MAYBE\"",
            ])
    }
}
