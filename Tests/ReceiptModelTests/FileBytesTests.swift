import _ForgeSupport
import Foundation
import Testing
import ForgeTestSupport

/// The runner's file reader, against Foundation's `Data(contentsOf:)` as the oracle.
@Suite("File bytes", .timeLimit(.minutes(2)))
struct FileBytesTests {
    @Test("Files of 0 bytes to 1.4 MB read whole, as Foundation reads them; a missing file and a folder are nil")
    func readsWhole() throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = SeededGenerator(seed: 5)
        for size in [0, 1, 4095, 4096, 65_537, 1_400_000] {
            let file = folder.appendingPathComponent("\(size)")
            try Data(random.bytes(size)).write(to: file)
            let read = try #require(FileBytes.read(file.path))
            #expect(read.count == size)
            #expect(read == [UInt8](try Data(contentsOf: file)))
        }
        #expect(FileBytes.read(folder.appendingPathComponent("absent").path) == nil)
        #expect(FileBytes.read(folder.path) == nil, "a folder is not a file to read")
    }

    @Test("A file with no size to go by (/proc) is read to its end")
    func readsWithoutSize() throws {
        let read = try #require(FileBytes.read("/proc/self/status"))
        #expect(String(decoding: read, as: UTF8.self).contains("VmRSS:"), "read on past the one-byte buffer a size of 0 allows")
    }
}
