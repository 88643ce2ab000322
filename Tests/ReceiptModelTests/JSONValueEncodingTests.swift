import _ForgeSupport
import Foundation
import Testing

/// `JSONValue(encoding:)`: Encodable values as the package's JSON value, members in the order they are declared
/// (issue 38: the Server API's response models are written in Apple's order by it).
@Suite("JSONValue(encoding:): Encodable in declared order", .timeLimit(.minutes(2)))
struct JSONValueEncodingTests {
    struct Item: Codable, Equatable {
        var status: Int64
        var originalTransactionId: String
        var signedTransactionInfo: String
    }

    struct Page: Codable, Equatable {
        var revision: String
        var hasMore: Bool
        var appAppleId: Int64?
        var environment: Kind
        var items: [Item]
        var ratio: Double
        var small: UInt8
    }

    enum Kind: String, Codable { case sandbox = "Sandbox" }

    static let page = Page(
        revision: "a/b", hasMore: true, appAppleId: nil, environment: .sandbox,
        items: [Item(status: 1, originalTransactionId: "20", signedTransactionInfo: "x.y.z"), Item(status: 5, originalTransactionId: "21", signedTransactionInfo: "")],
        ratio: 0.5, small: 7)

    @Test("members in declared order at every depth, nil optionals left out, slashes unescaped, integers apart from numbers; JSONDecoder reads it back")
    func declaredOrder() throws {
        let value = try JSONValue(encoding: Self.page)
        let text = value.serialized(pretty: false)
        #expect(
            text
                == #"{"revision":"a/b","hasMore":true,"environment":"Sandbox","items":[{"status":1,"originalTransactionId":"20","signedTransactionInfo":"x.y.z"},{"status":5,"originalTransactionId":"21","signedTransactionInfo":""}],"ratio":0.5,"small":7}"#
        )
        #expect(value["small"] == .integer(7) && value["ratio"].map { if case .number = $0 { true } else { false } } == true)
        #expect(try JSONDecoder().decode(Page.self, from: Data(text.utf8)) == Self.page)
        var present = Self.page
        present.appAppleId = 6_446_000_000
        #expect(try JSONValue(encoding: present).objectValue?.keys == ["revision", "hasMore", "appAppleId", "environment", "items", "ratio", "small"])
    }

    /// Writes what a hand-written conformance asks for, in its order, through every container kind.
    struct HandWritten: Encodable {
        enum Keys: String, CodingKey { case z, a, nested, list, again }
        func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encodeNil(forKey: .z)
            try keyed.encode(Int32(-3), forKey: .a)
            var nested = keyed.nestedContainer(keyedBy: Keys.self, forKey: .nested)
            try nested.encode("n", forKey: .a)
            var list = keyed.nestedUnkeyedContainer(forKey: .list)
            try list.encode(true)
            try list.encodeNil()
            try list.encode([UInt16(1), 2])
            var inner = list.nestedContainer(keyedBy: Keys.self)
            try inner.encode(Float(1.5), forKey: .z)
            try keyed.encode("last value, first place", forKey: .z)
            try keyed.encode(Empty(), forKey: .again)
        }
    }

    struct Empty: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    @Test("hand-written conformances: nested keyed and unkeyed containers, null, a key written twice keeps its first place and its last value, a value that writes nothing is {}")
    func containers() throws {
        let text = try JSONValue(encoding: HandWritten()).serialized(pretty: false)
        #expect(text == #"{"z":"last value, first place","a":-3,"nested":{"a":"n"},"list":[true,null,[1,2],{"z":1.5}],"again":{}}"#)
        #expect(try JSONValue(encoding: [Int64.max, Int64.min]).serialized(pretty: false) == "[9223372036854775807,-9223372036854775808]")
        #expect(try JSONValue(encoding: "top") == .string("top"))
    }

    struct Twice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            try single.encode(2)
        }
    }

    struct Mixed: Encodable {
        enum Keys: CodingKey { case a }
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(2, forKey: .a)
        }
    }

    struct Dated: Encodable { var when = Date(timeIntervalSince1970: 0) }
    struct Big: Encodable { var count = UInt64.max }
    struct NotANumber: Encodable { var ratio = Double.nan }

    @Test(
        "what JSON cannot carry or JSONEncoder would trap on is thrown, never a trap: nothing at the top, a second value, a keyed container over a value, UInt64 past Int64, NaN, Date, Data"
    )
    func refusals() {
        let refused: [(String, any Encodable)] = [
            ("nothing", Empty()), ("twice", Twice()), ("mixed", Mixed()), ("UInt64.max", Big()), ("NaN", NotANumber()), ("Date", Dated()),
            ("Data", [Data([1, 2])]),
        ]
        for (name, value) in refused {
            #expect(throws: EncodingError.self, "\(name)") { try JSONValue(encoding: value) }
        }
    }
}
