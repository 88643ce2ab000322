import FuzzSupport
import Foundation
import StoreForge
import _ForgeSupport
import StoreModel

let mutator = (try? Forge.bundled()).map { Mutator(forge: $0) }
/// A JSON document is decoded as a recipe (`forge mutate --replay`); other bytes are read as choices
/// (`MutantRecipe(choosingFrom:)`), so every mutation meets every kind of value and order of steps.
func fuzzRecipeReplay(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let mutator, let start, count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    if bytes[0] == UInt8(ascii: "{") {
        if let recipe = try? JSONDecoder().decode(MutantRecipe.self, from: Data(bytes)) { _ = try? mutator.replay(recipe) }
    } else {
        _ = try? mutator.replay(MutantRecipe(choosingFrom: bytes))
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzRecipeReplay(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
