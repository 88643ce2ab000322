public import Foundation

/// A fresh folder of the test's own under the system's temporary folder: a test writes nowhere else. The caller
/// removes it (`defer { try? FileManager.default.removeItem(at: folder) }`).
public func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("forge-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs `body` with a fresh temporary folder, removed afterwards whatever `body` did.
public func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let folder = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}

/// Every file below `directory` (hidden ones too), relative path → bytes; with `folders`, every folder too, as
/// `path/` → empty, so a test sees a folder appear or vanish.
public func fileTree(_ directory: URL, folders: Bool = false) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    let base = directory.standardizedFileURL.path
    guard let walker = FileManager.default.enumerator(atPath: base) else { return contents }
    for case let relative as String in walker {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: base + "/" + relative, isDirectory: &isDirectory) else { continue }
        if isDirectory.boolValue {
            if folders { contents[relative + "/"] = Data() }
        } else {
            contents[relative] = try Data(contentsOf: URL(fileURLWithPath: base + "/" + relative))
        }
    }
    return contents
}
