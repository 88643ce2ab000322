@testable import StoreServer
import Foundation
import StoreForge
import _ForgeSupport
import StoreModel
import Synchronization
import ForgeTestSupport
import Testing

/// The server state's own bounds: records evicted oldest first at ``ServerState/maximumRecords``, a clock that stops
/// at the last date receipts carry, and a store that refuses changes said once, then counted.
@Suite("The server state's bounds: records, the clock's end, a full disk", .timeLimit(.minutes(2)))
struct ServerStateBoundsTests {
    @Test("At maximumRecords the oldest record of a kind makes room for the next, in memory and in what the store is told")
    func evictsTheOldest() throws {
        let store = RecordingStore()
        let state = try ServerState(scenarios: [try StateFixtures.sandboxCustomer()], now: ReceiptDate.parse(StateFixtures.clock), store: store)
        let date = try #require(ReceiptDate.parse(StateFixtures.clock))
        let extra = 3
        for number in 0..<(ServerState.maximumRecords + extra) {
            try state.change { $0.remember(ServerState.FinishedTransaction(environment: .sandbox, transactionID: String(number), finishedAt: date)) }
        }
        let finished = state.mutable.withLock { $0.finished }
        #expect(finished.count == ServerState.maximumRecords)
        #expect(finished.first?.transactionID == String(extra) && finished.last?.transactionID == String(ServerState.maximumRecords + extra - 1))
        let evictions = store.written.flatMap { $0 }.filter { "\($0)".hasPrefix("evict(") }
        #expect(evictions.count == extra, "one eviction written per record past the bound")
    }

    @Test("The clock stops at the last second receipts carry, says so once, and the API keeps answering there")
    func clockStopsAtTheEnd() throws {
        let warnings = Mutex<[String]>([])
        let scenario = try StateFixtures.sandboxCustomer()
        let lifetime = try #require(try StateFixtures.ids(scenario)["lifetime"]?.first)
        // A year a second from the last minute: any instant later is past the end.
        let state = try ServerState(
            scenarios: [scenario], now: ReceiptDate.parse("9999-12-30T23:59:00Z"), timeRate: ServerState.timeRates.upperBound,
            warn: { message in warnings.withLock { $0.append(message) } })
        let service = try ServerAPIService(state: state, forge: try .bundled(), configuration: .init(access: .open))
        #expect(state.now() == ServerState.lastInstant)
        let info = StateFixtures.call(service, .transactionInfo, "\(lifetime)")
        #expect(info.status == 200)
        try state.setClock(to: ReceiptDate.writable.upperBound.addingTimeInterval(86_400 * 400))
        #expect(state.now() == ServerState.lastInstant)
        #expect(warnings.withLock { $0 }.count == 1)
        #expect(warnings.withLock { $0 }.first?.contains("9999-12-30T23:59:59Z") == true)
    }

    @Test(
        "A slow disk holds no reader (issue 38): while the clock's move and a change are being written, the clock and the customers are read as they were; each is made once written, in order"
    )
    func writesHoldNoReader() async throws {
        let store = RecordingStore()
        let scenario = try StateFixtures.sandboxCustomer()
        let now = try #require(ReceiptDate.parse(StateFixtures.clock))
        let state = try ServerState(scenarios: [scenario], now: now, store: store)
        let later = now.addingTimeInterval(86_400)
        let date = now
        let batchesBefore = store.written.count  // the customers, written when the state was made
        store.hold()
        // Whatever happens, the gate opens before the test ends: the writers are waiting at it.
        defer { store.release() }
        let moved = Task { await onThread { Result { () throws(ServeError) in try state.setClock(to: later) } } }
        try await eventually("the clock's write is at the store", within: .seconds(30)) { store.writesWaiting == 1 }
        let changed = Task {
            await onThread {
                Result { () throws(ServerAPIError) in try state.change { $0.remember(ServerState.FinishedTransaction(environment: .sandbox, transactionID: "1", finishedAt: date)) }
                }
            }
        }
        // Readers on threads of their own: with the write held under the state's lock, they would wait for it.
        let read = Mutex<(Date, Int)?>(nil)
        Thread {
            let seen = (state.now(), state.customers.count)
            read.withLock { $0 = seen }
        }.start()
        try await eventually("the clock and the customers are read while the write waits", within: .seconds(30)) { read.withLock { $0 } != nil }
        #expect(read.withLock { $0?.0 } == now, "the clock is as it was until its move is written")
        #expect(store.writesWaiting == 1, "the change waits for the clock's write, not beside it")
        store.release()
        _ = try await moved.value.get()
        _ = try await changed.value.get()
        #expect(state.now() == later)
        #expect(state.mutable.withLock { $0.finished.count } == 1)
        let written = store.written.dropFirst(batchesBefore)
        #expect(written.count == 2, "\(written.count) batches")
        if case .clock(let at, _) = written.first?.first {
            #expect(written.first?.count == 1 && at == later, "the clock's move first")
        } else {
            Issue.record("the clock's move was not written first")
        }
    }

    @Test("A store that refuses every change (a full disk): each change answers 5000000 and is not made; said once, then counted")
    func fullDiskSaidOnce() throws {
        let warnings = Mutex<[String]>([])
        let store = RecordingStore()
        let scenario = try StateFixtures.sandboxCustomer()
        let original = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        let now = try #require(ReceiptDate.parse(StateFixtures.clock))
        let state = try ServerState(scenarios: [scenario], now: now, store: store, warn: { message in warnings.withLock { $0.append(message) } })
        let service = try ServerAPIService(state: state, forge: try .bundled(), configuration: .init(now: now, access: .open))
        store.refuse(true)
        for number in 1...25 {
            let answer = StateFixtures.call(
                service, .setAppAccountToken, "\(original)",
                body: #"{"appAccountToken":"00000000-0000-4000-8000-\#(String(format: "%012d", number))"}"#)
            #expect(answer.status == 500 && StateFixtures.json(answer)?["errorCode"]?.integerValue == 5_000_000)
        }
        #expect(warnings.withLock { $0 }.count == 1, "said once: \(warnings.withLock { $0 })")
        #expect(warnings.withLock { $0 }.first?.contains("the disk is full") == true)
        #expect(state.refusedWrites == 25)
        #expect(state.customers[0].scenario.timeline == scenario.timeline, "no change made")
        store.refuse(false)
        #expect(
            StateFixtures.call(
                service, .setAppAccountToken, "\(original)", body: #"{"appAccountToken":"00000000-0000-4000-8000-000000000099"}"#
            ).status == 200)
    }
}
