import Foundation
import ReceiptCorpus
import Testing
import _ForgeSupport
import ForgeTestSupport

/// The committed corpus.
private let committedVectors = Repository.vectors

private func validator(_ schema: String, at pointer: String = "") throws -> JSONSchemaValidator {
    try JSONSchemaValidator(schema: Data(schema.utf8), at: pointer)
}

private func check(_ validator: JSONSchemaValidator, _ json: String) -> [String] {
    validator.violations(Data(json.utf8)).map(\.description)
}

@Suite("JSON Schema validator", .timeLimit(.minutes(2)))
struct SchemaValidatorTests {
    @Test("type: one name, several names, null; integer vs number vs boolean")
    func types() throws {
        let integer = try validator(#"{"type":"integer"}"#)
        #expect(check(integer, "3") == [])
        #expect(check(integer, "3.0") == [], "a number with no fraction is an integer in JSON Schema")
        #expect(check(integer, "3.5") == ["(root): expected integer, got 3.5"])
        #expect(check(integer, "true") == ["(root): expected integer, got true"])
        #expect(check(integer, #""3""#) == [#"(root): expected integer, got "3""#])
        #expect(check(integer, "{}") == ["(root): expected integer, got an object"])
        #expect(check(try validator(#"{"type":"number"}"#), "3") == [])
        let optionalText = try validator(#"{"type":["string","null"]}"#)
        #expect(check(optionalText, "null") == [])
        #expect(check(optionalText, #""x""#) == [])
        #expect(check(optionalText, "[]") == ["(root): expected string or null, got an array"])
        #expect(check(try validator(#"{"type":"boolean"}"#), "0") == ["(root): expected boolean, got 0"])
    }

    @Test("properties, required and additionalProperties (false or a schema), with JSON pointer paths")
    func objects() throws {
        let closed = try validator(
            #"""
            {"type":"object","properties":{"seq":{"type":"integer"},"a/b":{"type":"string"}},"required":["seq","id"],
             "additionalProperties":false}
            """#)
        #expect(check(closed, #"{"seq":1,"id":"x","a/b":"y"}"#) == [#"/id: unexpected property "id""#])
        #expect(
            check(closed, #"{"a/b":2,"extra~":true}"#) == [
                #"(root): missing required property "seq""#, #"(root): missing required property "id""#,
                "/a~1b: expected string, got 2", #"/extra~0: unexpected property "extra~""#,
            ])
        let dictionary = try validator(#"{"type":"object","additionalProperties":{"type":"integer","minimum":0}}"#)
        #expect(check(dictionary, #"{"PASS":3,"SKIP":0}"#) == [])
        #expect(check(dictionary, #"{"PASS":-1,"SKIP":"0"}"#) == ["/PASS: expected at least 0, got -1", #"/SKIP: expected integer, got "0""#])
        #expect(check(try validator(#"{"properties":{"a":{"type":"string"}}}"#), #"{"b":1}"#) == [], "additional properties allowed by default")
    }

    @Test("enum and const, numbers compared by value")
    func enumAndConst() throws {
        let verdict = try validator(#"{"type":"string","enum":["accept","reject"]}"#)
        #expect(check(verdict, #""reject""#) == [])
        #expect(check(verdict, #""yes""#) == [#"(root): expected one of accept, reject, got "yes""#])
        let stop = try validator(#"{"const":"stop"}"#)
        #expect(check(stop, #""stop""#) == [])
        #expect(check(stop, #""Stop""#) == [#"(root): expected "stop", got "Stop""#])
        #expect(check(try validator(#"{"const":1}"#), "1.0") == [])
        #expect(check(try validator(#"{"enum":[1,null]}"#), "null") == [])
    }

    @Test("items checks every element, the index in the path")
    func items() throws {
        let list = try validator(#"{"type":"array","items":{"type":"string"}}"#)
        #expect(check(list, #"["a","b"]"#) == [])
        #expect(check(list, #"["a",2,"c",null]"#) == ["/1: expected string, got 2", "/3: expected string, got null"])
    }

    @Test("minimum for integers")
    func minimum() throws {
        let concurrency = try validator(#"{"type":"integer","minimum":1}"#)
        #expect(check(concurrency, "1") == [])
        #expect(check(concurrency, "0") == ["(root): expected at least 1, got 0"])
    }

    @Test("$ref into $defs (and to the root); a reference to nothing is refused at init")
    func references() throws {
        let tree = try validator(
            #"""
            {"$defs":{"Leaf":{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":false}},
             "type":"object","properties":{"leaf":{"$ref":"#/$defs/Leaf"},"children":{"type":"array","items":{"$ref":"#"}}}}
            """#)
        #expect(check(tree, #"{"leaf":{"name":"a"},"children":[{"leaf":{"name":"b"}}]}"#) == [])
        #expect(
            check(tree, #"{"children":[{"leaf":{"name":1,"x":0}}]}"#) == [
                "/children/0/leaf/name: expected string, got 1", #"/children/0/leaf/x: unexpected property "x""#,
            ])
        #expect(throws: SchemaError(.unresolvableReference, "")) { try validator(##"{"$ref":"#/$defs/Missing"}"##) }
        #expect(throws: SchemaError(.unsupportedKeyword, "")) { try validator(#"{"$ref":"other.json#/x"}"#) }
    }

    @Test("Keywords it does not implement are refused, not ignored; a broken schema is invalidSchema")
    func refusesWhatItCannotCheck() throws {
        #expect(throws: SchemaError(.unsupportedKeyword, "")) { try validator(#"{"type":"string","pattern":"^a"}"#) }
        #expect(throws: SchemaError(.unsupportedKeyword, "")) { try validator(#"{"properties":{"a":{"minLength":1}}}"#) }
        #expect(throws: SchemaError(.invalidSchema, "")) { try validator("not json") }
        #expect(throws: SchemaError(.invalidSchema, "")) { try validator(#"{"type":"text"}"#) }
        #expect(throws: SchemaError(.invalidSchema, "")) { try validator(#"{"required":"seq"}"#) }
        #expect(throws: SchemaError(.unresolvableReference, "")) { try validator(#"{"$defs":{}}"#, at: "/$defs/Nothing") }
        // Annotations are fine.
        _ = try validator(#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","title":"t","description":"d"}"#)
    }

    /// Two messages told apart by a `type` const, as the harness protocol is.
    private static let messages = #"""
        {"oneOf":[{"$ref":"#/$defs/Result"},{"$ref":"#/$defs/Skipped"}],
         "$defs":{
          "Result":{"type":"object","properties":{"type":{"const":"result"},"seq":{"type":"integer"},
                    "verdict":{"enum":["accept","reject"]}},"required":["type","seq","verdict"],"additionalProperties":false},
          "Skipped":{"type":"object","properties":{"type":{"const":"skipped"},"seq":{"type":"integer"},"reason":{"type":"string"}},
                     "required":["type","seq","reason"],"additionalProperties":false}}}
        """#

    @Test("oneOf reports the branch whose const matches, not every branch's complaints")
    func oneOfPicksTheDiscriminatedBranch() throws {
        let messages = try validator(Self.messages)
        #expect(check(messages, #"{"type":"result","seq":1,"verdict":"accept"}"#) == [])
        #expect(check(messages, #"{"type":"skipped","seq":1,"reason":"no"}"#) == [])
        // Judged as a skip it would have fewer complaints (type, seq), but it says it is a result.
        #expect(
            check(messages, #"{"type":"result","seq":"1","reason":"x"}"#) == [
                #"(root): missing required property "verdict""#, #"/reason: unexpected property "reason""#, #"/seq: expected integer, got "1""#,
            ])
        #expect(check(messages, #"{"type":"result","seq":1,"verdict":"yes"}"#) == [#"/verdict: expected one of accept, reject, got "yes""#])
        #expect(check(messages, #"{"type":"skipped","seq":2}"#) == [#"(root): missing required property "reason""#])
        // No branch claims it: one finding listing what `type` may be.
        #expect(check(messages, #"{"type":"bogus","seq":2}"#) == [#"/type: expected one of result, skipped, got "bogus""#])
        #expect(check(messages, #"{"seq":2}"#).contains(#"(root): missing required property "type""#))
        #expect(check(messages, "[]") == ["(root): expected object, got an array"])
    }

    @Test("oneOf fails when several branches fit; anyOf does not; nested groups keep the best branch")
    func oneOfExactlyOneAnyOfAtLeastOne() throws {
        let overlapping = try validator(#"{"oneOf":[{"type":"integer"},{"type":"number"}]}"#)
        #expect(check(overlapping, "1.5") == [])
        #expect(check(overlapping, "1") == ["(root): matches 2 alternatives of oneOf, expected exactly one"])
        let either = try validator(#"{"anyOf":[{"type":"integer"},{"type":"number"}]}"#)
        #expect(check(either, "1") == [])
        #expect(check(either, #""1""#) == [#"(root): expected integer, got "1""#])
        // An object against `X or null` is judged as an X, not as "expected null".
        let optionalObject = try validator(#"{"anyOf":[{"type":"object","required":["a"]},{"type":"null"}]}"#)
        #expect(check(optionalObject, "null") == [])
        #expect(check(optionalObject, "{}") == [#"(root): missing required property "a""#])
        let nested = try validator(
            #"""
            {"oneOf":[{"$ref":"#/$defs/In"},{"$ref":"#/$defs/Out"}],
             "$defs":{"In":{"oneOf":[{"properties":{"type":{"const":"hello"},"suite":{"type":"string"}},"required":["type","suite"]},
                                     {"properties":{"type":{"const":"stop"}},"required":["type"]}]},
                      "Out":{"oneOf":[{"properties":{"type":{"const":"result"}},"required":["type"]}]}}}
            """#)
        #expect(check(nested, #"{"type":"hello","suite":"1"}"#) == [])
        #expect(check(nested, #"{"type":"hello","suite":1}"#) == ["/suite: expected string, got 1"])
        #expect(check(nested, #"{"type":"nope"}"#) == [#"/type: expected one of hello, stop, result, got "nope""#])
        // Starting from a subschema: only that direction's messages are allowed.
        let outOnly = try validator(
            #"""
            {"$defs":{"Out":{"oneOf":[{"properties":{"type":{"const":"result"}},"required":["type"]}]}}}
            """#, at: "/$defs/Out")
        #expect(check(outOnly, #"{"type":"result"}"#) == [])
        #expect(check(outOnly, #"{"type":"hello"}"#) == [#"/type: expected one of result, got "hello""#])
    }

    @Test("Input that is not JSON gives one violation at the root saying so")
    func notJSON() throws {
        let anything = try validator("true")
        for text in ["", "   ", "{", #"{"a":1,}"#, "[1] [2]", "nul", #"{"a":01}"#, "\"\u{1}\"", String(repeating: "[", count: 10_000)] {
            let found = anything.violations(Data(text.utf8))
            #expect(found.count == 1 && found.first?.path == "" && found.first?.message.hasPrefix("not JSON: ") == true, "\(text.prefix(20))")
        }
        #expect(anything.violations(Data([0x22, 0xFF, 0x22])).first?.message.hasPrefix("not JSON") == true, "invalid UTF-8")
        #expect(anything.violations(Data(#" {"a":["\u00e9\ud83d\ude00",-1.5e3,null]} "#.utf8)) == [])
    }

    @Test("The committed manifest.json validates against manifest.schema.json; a mutated one fails at the right path")
    func committedManifest() throws {
        let schema = try Data(contentsOf: committedVectors.appendingPathComponent("schema/manifest.schema.json"))
        let manifestValidator = try JSONSchemaValidator(schema: schema)
        let manifest = try Data(contentsOf: committedVectors.appendingPathComponent("manifest.json"))
        #expect(manifestValidator.violations(manifest) == [])

        var object = try #require(try JSONSerialization.jsonObject(with: manifest) as? [String: Any])
        var vectors = try #require(object["vectors"] as? [[String: Any]])
        vectors[3]["severity"] = "catastrophic"
        var context = try #require(vectors[5]["context"] as? [String: Any])
        context["clock"] = "system"
        vectors[5]["context"] = context
        vectors[7]["revision"] = "2"
        object["vectors"] = vectors
        let mutated = try JSONSerialization.data(withJSONObject: object)
        #expect(
            manifestValidator.violations(mutated) == [
                SchemaViolation(path: "/vectors/3/severity", message: #"expected one of low, medium, high, critical, got "catastrophic""#),
                SchemaViolation(path: "/vectors/5/context/clock", message: #"unexpected property "clock""#),
                SchemaViolation(path: "/vectors/7/revision", message: #"expected integer, got "2""#),
            ])
    }

    @Test("Checking a whole corpus manifest is fast (schema compiled once)")
    func fastEnough() throws {
        let schema = try Data(contentsOf: committedVectors.appendingPathComponent("schema/vector.schema.json"))
        let vectorValidator = try JSONSchemaValidator(schema: schema)
        let manifest = try ManifestIO.load(from: committedVectors)
        let encoded = try manifest.vectors.map { try JSONEncoder().encode($0) }
        let clock = ContinuousClock()
        let took = clock.measure {
            for data in encoded { #expect(vectorValidator.violations(data).isEmpty) }
        }
        // Generous for debug builds on a slow CI machine: ~160 messages.
        #expect(took < .seconds(2), "\(took)")
    }
}
