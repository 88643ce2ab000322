import Foundation
import ReceiptModel
import Synchronization
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// Issue 19, item 5: a JSON object's lookups were a linear scan, so parsing n keys cost n² (a 32k-key
/// verifyReceipt body took 30 s, a million keys never ended). Objects keep their order and their
/// duplicate-key rule (first place, last value) while parsing and lookups are linear.
@Suite("JSON objects scale linearly", .timeLimit(.minutes(2)))
struct JSONScalingTests {
    /// Whether `work`, run on a thread of its own, ended by `deadline`: the test's task waits without holding a
    /// thread, and a quadratic parse is left running while the test fails instead of hanging.
    static func completes(by deadline: Duration, _ work: @escaping @Sendable () -> Void) async -> Bool {
        let done = Mutex(false)
        let thread = Thread {
            work()
            done.withLock { $0 = true }
        }
        thread.stackSize = 16 << 20
        thread.start()
        return (try? await eventually("the work ended", within: deadline, every: .milliseconds(50)) { done.withLock { $0 } }) != nil
    }

    /// `{"k0":0,"k1":1,…}` of `count` keys.
    static func object(keys count: Int) -> [UInt8] {
        var text = "{"
        text.reserveCapacity(count * 14)
        for index in 0..<count { text += (index == 0 ? "" : ",") + "\"k\(index)\":\(index)" }
        return Array((text + "}").utf8)
    }

    /// The deadline is not a measure of speed: a linear parse takes about a second even in a debug build on a loaded
    /// machine, a quadratic one of this object hours; 90 s tells the two apart on any machine.
    @Test("A 1,000,000-key object (12 MB) parses, and every key is found, where a quadratic parse would take hours")
    func millionKeys() async {
        let bytes = Self.object(keys: 1_000_000)
        let checked = Mutex(false)
        let finished = await Self.completes(by: .seconds(90)) {
            guard let value = try? JSONValue(parsing: bytes), let object = value.objectValue else { return }
            var found = object.count == 1_000_000 && object.keys.first == "k0" && object.keys.last == "k999999"
            for index in stride(from: 0, to: 1_000_000, by: 1) where object["k\(index)"] != .integer(Int64(index)) { found = false }
            checked.withLock { $0 = found }
        }
        #expect(finished, "parsing and looking up 1,000,000 keys did not finish within 90 s: superlinear")
        #expect(checked.withLock { $0 })
    }

    @Test("A repeated key keeps its first place and its last value, in small objects and indexed large ones", arguments: [3, 16, 17, 5_000])
    func duplicates(size: Int) throws {
        var text = "{"
        for index in 0..<size { text += "\"k\(index)\":\(index)," }
        text += "\"k0\":\"last\",\"k\(size - 1)\":\"end\"}"
        let object = try #require(try JSONValue(parsing: Array(text.utf8)).objectValue)
        #expect(object.count == size)
        #expect(object.keys == (0..<size).map { "k\($0)" })
        #expect(object["k0"] == .string("last"))
        #expect(object["k\(size - 1)"] == .string("end"))
        #expect(object["k\(size)"] == nil)
    }

    @Test("Setting, removing and re-adding keys keeps order and lookups consistent across the index threshold")
    func editing() {
        var object = JSONObject()
        for index in 0..<40 { object["k\(index)"] = .integer(Int64(index)) }
        object["k5"] = nil
        object["k30"] = .string("replaced")
        for index in 0..<30 where index != 5 { object["k\(index)"] = nil }
        // 10 left: below the threshold again, so lookups scan.
        #expect(object.keys == (30..<40).map { "k\($0)" })
        object["k5"] = .integer(5)
        #expect(object.keys.last == "k5" && object["k5"] == .integer(5) && object["k30"] == .string("replaced"))
        for index in 100..<120 { object["k\(index)"] = .bool(true) }
        #expect(object.count == 31 && object["k119"] == .bool(true) && object["k31"] == .integer(31))
        object["k31"] = nil
        #expect(object["k31"] == nil && object["k32"] == .integer(32) && object["k119"] == .bool(true) && object.count == 30)
        let mapped = object.compactMapValues { $0 == .bool(true) ? nil : $0 }
        #expect(mapped.count == 10 && mapped["k5"] == .integer(5) && mapped["k100"] == nil)
    }

    @Test("Large objects are equal in any member order, and hash alike")
    func equality() throws {
        let forward = try JSONValue(parsing: Self.object(keys: 1_000))
        let backward = JSONValue.object(JSONObject((0..<1_000).reversed().map { ("k\($0)", JSONValue.integer(Int64($0))) }))
        #expect(forward == backward)
        #expect(Set([forward, backward]).count == 1)
        #expect(forward != JSONValue.object(JSONObject((0..<1_000).map { ("k\($0)", JSONValue.integer(Int64($0 == 999 ? 0 : $0))) })))
    }
}
