import Foundation
import ForgeTestSupport
import Testing

/// Every harness starts with no signal blocked and none ignored, however many run at once (DESIGN §8): a harness
/// with SIGTERM or SIGALRM blocked never sees its own `timeout` or `alarm` fire.
@Suite(
    .timeLimit(.minutes(2)),
    .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "the masks are read from /proc/PID/status (Linux)"))
struct HarnessSignalMaskTests {
    static let vectors = Repository.vectors.path

    @Test("an exit: harness writes its SigBlk and SigIgn for each of the 20 valid:: vectors: all zero at --parallel 1, 2, 4 and 8")
    func emptyMaskAtEveryParallelism() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let masks = directory.appendingPathComponent("masks")
        let script = directory.appendingPathComponent("mask.sh")
        // One line per harness, appended whole (O_APPEND): its vector, then its own (the shell's) mask and ignored set.
        try """
        #!/bin/sh
        cat > "\(directory.path)/input.$$"
        blocked=$(sed -n 's/^SigBlk:[[:space:]]*//p' /proc/$$/status)
        ignored=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
        echo "$RF_ID $blocked $ignored" >> "\(masks.path)"
        exit 0
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        var seen: [Int: [String]] = [:]
        for parallel in [1, 2, 4, 8] {
            try? FileManager.default.removeItem(at: masks)
            let ran = try await forge("run", "--vectors", Self.vectors, "--target", "exit:\(script.path)", "--run", "valid::*", "--parallel", String(parallel), "--quiet")
            #expect(ran.status == 1 || ran.status == 0, "\(ran.text)\(ran.stderr)")
            let lines = try String(contentsOf: masks, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(lines.count == 20, "--parallel \(parallel): \(lines.count) harnesses")
            seen[parallel] = lines.filter { !$0.hasSuffix(" 0000000000000000 0000000000000000") }
        }
        #expect(seen.values.allSatisfy { $0.isEmpty }, "harnesses with a signal blocked or ignored, by --parallel: \(seen.filter { !$0.value.isEmpty })")
    }
}
