import Foundation
import FuzzSupport
import StoreForge

let replayer = (try? Forge.bundled()).map { Mutator(forge: $0) }

/// `forge mutate --replay` on JWS recipes. A JSON document is decoded as a recipe and replayed as the CLI
/// does (whatever its base); other bytes are read as choices (`MutantRecipe(choosingJWSFrom:)`), so every JWS
/// mutation meets every kind of value, every other step and every base vector.
func fuzzJWSRecipeReplay(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let replayer, let start, count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    if bytes[0] == UInt8(ascii: "{") {
        if let recipe = try? JSONDecoder().decode(MutantRecipe.self, from: Data(bytes)) { _ = try? replayer.replay(recipe) }
    } else {
        _ = try? replayer.replay(MutantRecipe(choosingJWSFrom: bytes))
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzJWSRecipeReplay(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
