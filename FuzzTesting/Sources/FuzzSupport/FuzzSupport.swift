public import CLibFuzzer
import Foundation

/// Runs libFuzzer's driver on `testOneInput` with the process's arguments, and exits with its status.
///
/// SwiftPM aliases `main` to each fuzz target's entry point (lld keeps that alias over libFuzzer's own
/// `main`, which is linked but never runs), so a target's top-level code initializes its globals and
/// then calls this. libFuzzer's `main` still needs `LLVMFuzzerTestOneInput` to link: each target defines
/// it with `@_cdecl`, as the same function it passes here.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argumentCount = CommandLine.argc
    var argumentValues: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argumentCount, &argumentValues, testOneInput))
}
