import CLibFuzzer
import Foundation
import ReceiptForge

let mutator = (try? TestPKI.bundled()).flatMap { try? Forge(pki: $0) }.map { Mutator(forge: $0) }

/// Arbitrary JSON as a mutant recipe (`forge mutate --replay`): refused or rebuilt, never a trap.
func fuzzRecipeReplay(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    guard let mutator, let recipe = try? JSONDecoder().decode(MutantRecipe.self, from: data) else { return 0 }
    _ = try? mutator.replay(recipe)
    return 0
}

// SwiftPM aliases `main` to this file's entry point (lld keeps that alias over libFuzzer's own `main`,
// which is linked but never runs), so the top-level code below initializes the globals above and then
// runs libFuzzer's driver. libFuzzer's `main` needs the symbol to link.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzRecipeReplay(data.map(UnsafeRawPointer.init), size) }

var argumentCount = CommandLine.argc
var argumentValues: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argumentCount, &argumentValues) { data, size in testOneInput(data, size) })
