import Foundation
import ForgeTestSupport
import StoreForge
import StoreModel
import Testing

/// DESIGN §8, an interrupted `vectors generate` left its staging folder beside the target when the signal landed
/// before the folder existed: the signal found nothing to discard and ended the process while the main thread went
/// on to create it. The folder is now made under the lock the interrupt takes (``StagingSlot``).
@Suite("An interrupt and the staged folder it discards", .timeLimit(.minutes(1)))
struct StagingSlotTests {
    /// Names in `parent` besides `target`.
    func leftovers(in parent: URL, besides target: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: parent.path).filter { $0 != target }
    }

    @Test("An interrupt before the folder is made: it is never made, and staging it throws")
    func stopFirst() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let slot = StagingSlot()
        #expect(slot.stop() == nil)
        var made = false
        #expect(throws: ForgeError.self) {
            _ = try slot.stage { () throws(ForgeError) in
                made = true
                return try StagedFolder(replacing: parent.appendingPathComponent("out")) { _ in [] }
            }
        }
        let left = try leftovers(in: parent, besides: "out")
        #expect(!made && left == [])
    }

    @Test("An interrupt after: the staging folder is discarded; after the commit, the output is left complete")
    func stopAfter() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let target = parent.appendingPathComponent("out")
        let staging = StagingSlot()
        let folder = try staging.stage { () throws(ForgeError) in try StagedFolder(replacing: target) { _ in [] } }
        try folder.write(Data("x".utf8), to: "a.txt")
        #expect(try leftovers(in: parent, besides: "out").count == 1)
        #expect(staging.stop() == true)
        #expect(try leftovers(in: parent, besides: "out") == [] && !FileManager.default.fileExists(atPath: target.path))

        let committing = StagingSlot()
        let committed = try committing.stage { () throws(ForgeError) in try StagedFolder(replacing: target) { _ in [] } }
        try committed.write(Data("x".utf8), to: "a.txt")
        #expect(try committed.commit() == nil)
        #expect(committing.stop() == false)
        #expect(FileManager.default.fileExists(atPath: target.appendingPathComponent("a.txt").path))
    }
}
