public import Foundation

/// The checkout the tests run from, found once from this file's own path, and what lives beside it.
public enum Repository {
    /// The repository's root: this file is `Tests/ForgeTestSupport/Repository.swift`.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file or folder of the repository, by its path from the root (`Vectors/manifest.json`).
    public static func file(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// The committed corpus.
    public static let vectors = file("Vectors")

    /// A certificate of the committed TEST PKIs (`Certificates/NAME`), as a path.
    public static func certificate(_ name: String) -> String { file("Certificates/\(name)").path }

    /// `../shared/interop`: real receipts and Apple's public certificates, beside the checkout on the project's
    /// machines and absent elsewhere (``Oracle/interop`` skips the tests that read it).
    public static let interop = root.deletingLastPathComponent().appendingPathComponent("shared/interop")
}
