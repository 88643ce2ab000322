import Foundation
import _ForgeSupport
import ForgeTestSupport
import StoreModel
import Testing

/// A `.storekit` file as large as a big catalogue (95,000 products) is read whole with every lookup by id, and one
/// that gives two subscription groups the same id is refused with the JSON path of the second.
@Suite("StoreKit files: size and group ids", .timeLimit(.minutes(2)))
struct StoreKitFileScaleTests {
    /// ``StoreKitCatalogue/text(consumables:groups:perGroup:groupIDs:)`` as bytes.
    static func catalogue(consumables: Int, groups: Int, perGroup: Int, groupIDs: [String]? = nil) -> [UInt8] {
        Array(StoreKitCatalogue.text(consumables: consumables, groups: groups, perGroup: perGroup, groupIDs: groupIDs).utf8)
    }

    @Test("95,000 products (35,000 consumables, 6 groups of 10,000 subscriptions): every one read, each subscription in its group")
    func largeCatalogue() throws {
        let configuration = try StoreKitConfiguration.read(Self.catalogue(consumables: 35_000, groups: 6, perGroup: 10_000))
        #expect(configuration.products.count == 95_000)
        #expect(configuration.groups.map(\.productIDs.count) == Array(repeating: 10_000, count: 6))
        #expect(configuration.group(of: "sub.5.9999")?.id == "21000005" && configuration.group(of: "sub.0.0")?.name == "Group 0")
        #expect(configuration.group(of: "coins.34999") == nil)
        #expect(try configuration.products(named: ["sub.3.7", "coins.0"]).map(\.productID) == ["sub.3.7", "coins.0"])
        // Without ids, a scenario buys every consumable and the first subscription of each group.
        #expect(try configuration.scenario(purchasing: []).purchases.count == 35_000 + 6)
    }

    @Test("Two subscription groups with one id are refused, naming the second group's id and the first group")
    func duplicateGroupID() throws {
        let bytes = Self.catalogue(consumables: 1, groups: 3, perGroup: 2, groupIDs: ["21000001", "21000002", "21000001"])
        let error = try #require(throws: StoreKitFileError.self) { try StoreKitConfiguration.read(bytes) }
        #expect(error.code == .invalid && error.keyPath == "subscriptionGroups[2].id", "\(error.keyPath): \(error.message)")
        #expect(error.message.contains("\"21000001\"") && error.message.contains("subscriptionGroups[0]"), "\(error.message)")
        // Distinct ids are read, each group with its own subscriptions.
        let distinct = try StoreKitConfiguration.read(Self.catalogue(consumables: 1, groups: 3, perGroup: 2))
        #expect(distinct.groups.map(\.id) == ["21000000", "21000001", "21000002"] && distinct.group(of: "sub.2.1")?.id == "21000002")
    }

    @Test("A product id defined twice is refused with its path, whatever the lists it is in")
    func duplicateProductID() throws {
        var text = String(decoding: Self.catalogue(consumables: 2, groups: 1, perGroup: 2), as: UTF8.self)
        text = text.replacingOccurrences(of: #""productID" : "sub.0.1""#, with: #""productID" : "coins.1""#)
        let error = try #require(throws: StoreKitFileError.self) { try StoreKitConfiguration.read(Array(text.utf8)) }
        #expect(error.keyPath == "subscriptionGroups[0].subscriptions[1].productID" && error.message.contains("\"coins.1\" is defined twice"), "\(error.message)")
    }
}
