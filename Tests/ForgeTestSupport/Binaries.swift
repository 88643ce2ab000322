public import Foundation

/// The executables SwiftPM built for this test run: they sit in the build folder, next to the test bundle.
public enum Binaries {
    /// `forge`.
    public static let forge = built("forge")
    /// `forge-http`, which `forge` hands network work to.
    public static let forgeHTTP = built("forge-http")

    /// The product `name` in the folder of the running test bundle or one above it (the bundle's layout differs
    /// between platforms), else `.build/debug/NAME`.
    static func built(_ name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return Repository.file(".build/debug/\(name)")
    }
}
