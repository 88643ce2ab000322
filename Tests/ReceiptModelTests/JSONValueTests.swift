import Foundation
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel

@Suite("JSONValue: the package's one JSON value", .timeLimit(.minutes(2)))
struct JSONValueTests {
    @Test("parsing keeps member order, integers apart from numbers, and writes back the same text")
    func roundTrip() throws {
        let text = #"{"z":1,"a":[true,null,1.5,"x\n\"y\""],"m":{"k":-7}}"#
        let value = try JSONValue(parsing: Data(text.utf8))
        #expect(value.serialized(pretty: false) == text)
        #expect(value["z"] == .integer(1))
        #expect(value["a"] == .array([.bool(true), .null, .number(1.5), .string("x\n\"y\"")]))
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members.keys == ["z", "a", "m"])
    }

    @Test("equality is JSON's: member order ignored, 1 equals 1.0, true is not 1")
    func equality() {
        let left: JSONValue = .object(["a": .integer(1), "b": .string("x")])
        let right: JSONValue = .object(["b": .string("x"), "a": .number(1.0)])
        #expect(left == right)
        #expect(Set([left, right]).count == 1)
        #expect(JSONValue.bool(true) != .integer(1))
    }

    @Test("RFC 6901 pointers, escapes included; a pointer without a leading slash names nothing")
    func pointers() throws {
        let value = try JSONValue(parsing: Data(#"{"a/b":{"c~d":[10,20]}}"#.utf8))
        #expect(value.at(pointer: "/a~1b/c~0d/1") == .integer(20))
        #expect(value.at(pointer: "") == value)
        #expect(value.at(pointer: "a~1b") == nil)
        #expect(value.at(pointer: "/a~1b/c~0d/2") == nil)
        #expect(JSONPointer.escape("a/b~c") == "a~1b~0c")
    }

    @Test(
        "strict parsing names the byte",
        arguments: [
            ("", "the input is empty"), ("01", "leading zero"), ("[1,]", "unexpected character"), ("{\"a\":1} x", "after the JSON value"),
            ("\"\\ud800\"", "unpaired surrogate"), ("\"\u{01}\"", "control character"),
        ])
    func strict(input: String, reason: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(input.utf8)) }
        do {
            _ = try JSONValue(parsing: Data(input.utf8))
        } catch {
            #expect(error.reason.contains(reason), "\(error.reason)")
        }
    }

    @Test("nesting beyond the bound is refused, not a stack overflow")
    func depth() {
        let deep = String(repeating: "[", count: JSONParseError.maximumDepth + 1) + String(repeating: "]", count: JSONParseError.maximumDepth + 1)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(deep.utf8)) }
    }

    @Test("Codable: decodes any JSON inside a model and encodes it back")
    func codable() throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"b":[1,2.5,false,null],"a":"s"}"#.utf8))
        #expect(value == .object(["a": .string("s"), "b": .array([.integer(1), .number(2.5), .bool(false), .null])]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == #"{"a":"s","b":[1,2.5,false,null]}"#)
    }
}

@Suite("Base64URL", .timeLimit(.minutes(2)))
struct Base64URLTests {
    @Test("Encodes as Foundation's base64 with the URL alphabet and no padding, and decodes back, for every length mod 3")
    func roundTrip() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) }
            let reference = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference)
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("a+b") == nil && Base64URL.decode("abc=") == nil && Base64URL.decode("a") == nil)
    }
}
