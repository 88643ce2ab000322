import Foundation
import _ForgeSupport
import FuzzSupport
import StoreForge
import StoreModel

/// Made once, lazily: LeakSanitizer reads what a one-time initializer (`_WZ`) allocates as not leaked (lsan.supp).
enum Fixture {
    static let forge = try? Forge(receiptPKI: .bundled())
    static let now = Date(timeIntervalSince1970: 1_735_689_600)
}

/// An Xcode `.storekit` file as `forge storekit` and `--storekit` read it: the reader, `forge storekit show`'s
/// listing and JSON, the products by id, the scenario `forge storekit scenario` writes, and (for a small catalogue)
/// the receipt and the StoreKit 2 transaction forge makes of it.
func fuzzStoreKitConfiguration(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let configuration = try? StoreKitConfiguration.read(bytes) else { return 0 }
    _ = configuration.listing()
    _ = (try? configuration.listingJSON())?.serialized(pretty: true)
    let ids = configuration.products.prefix(2).map(\.productID)
    _ = try? configuration.products(named: ids + ["not.in.the.file"])
    guard let scenario = try? configuration.scenario(purchasing: ids), let forge = Fixture.forge, configuration.products.count <= 8 else { return 0 }
    _ = try? forge.make(scenario, now: Fixture.now, reissuedAt: Fixture.now)
    _ = try? forge.make(.transaction, scenario: scenario, now: Fixture.now)
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzStoreKitConfiguration(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
