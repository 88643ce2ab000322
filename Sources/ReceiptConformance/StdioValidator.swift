#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization
import _ForgeSupport

/// The `stdio:` transport: one persistent harness process speaking NDJSON, one message per line.
///
/// The runner says `hello` (with the suite), the harness answers its own `hello`, then `validate`
/// requests go out as the runner has them and replies are matched by `seq`, in any order. When a reply
/// does not come within the timeout, that vector is TIMEOUT, the harness's process group is killed, and
/// the other requests it held are sent again to a fresh harness. A harness that exits or closes stdout
/// fails what it owed as CRASH and is restarted for the next request. A line that is not a reply to a
/// waiting request is a protocol violation, charged to the oldest request still waiting. Failure
/// messages end with the tail of the harness's stderr.
public final class StdioValidator: ReceiptValidator, Sendable {
    public let command: [String]
    public let timeout: Duration
    private let session: Session

    /// - Parameters:
    ///   - suite: the corpus version, sent in the runner's `hello`.
    ///   - checker: with `--validate-protocol`, every line the harness writes goes through it first.
    public init(command: [String], suite: String, timeout: Duration = .seconds(2), checker: ProtocolViolationCheck? = nil) {
        self.command = command
        self.timeout = timeout
        self.session = Session(command: command, hello: RunnerHello(suite: suite), timeout: timeout, checker: checker)
    }

    public func hello() async throws -> HarnessHello {
        try await session.hello()
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        await session.send(request)
    }

    /// Ends the harness: `stop`, a moment to exit, then its process group is killed.
    public func stop() async { await session.shutdown() }

    /// What the harness wrote that answered no waiting request (a second reply, a log line between
    /// requests): protocol violations that no vector's outcome could carry. At most
    /// `HarnessLimits.maximumStrayLines`, then "… and more".
    public func strayLines() async -> [String] { await session.stray }

    /// Why the harness could not be started or did not say hello.
    public struct HandshakeError: Error, CustomStringConvertible {
        public let description: String
    }

    actor Session {
        private let command: [String]
        private let runnerHello: RunnerHello
        private let timeout: Duration
        private let checker: ProtocolViolationCheck?

        /// The running harness; a new generation starts after every kill, and late news from an old one is ignored.
        private var child: ChildProcess?
        private var generation = 0
        /// The harness's hello, once; a restarted harness must still say hello but its features do not change.
        private var declared: HarnessHello?
        /// The start in progress, which concurrent senders wait for instead of starting their own.
        private var starting: Task<Void, any Error>?
        private var helloWaiter: CheckedContinuation<String?, Never>?
        private var awaitingHello = false
        private var bufferedHello: String?

        private struct Waiting {
            let request: ValidateRequest
            let continuation: CheckedContinuation<HarnessReply, Never>
            let generation: Int
            /// When its time is up; set when it is written to the harness.
            var deadline = ContinuousClock.now
        }
        private var waiting: [Int: Waiting] = [:]
        /// Seqs in the order they were sent, for charging a stray line to the oldest.
        private var order: [Int] = []

        init(command: [String], hello: RunnerHello, timeout: Duration, checker: ProtocolViolationCheck?) {
            self.command = command
            self.runnerHello = hello
            self.timeout = timeout
            self.checker = checker
        }

        func hello() async throws -> HarnessHello {
            try await ensureStarted()
            guard let declared else { throw HandshakeError(description: "no hello") }
            return declared
        }

        func send(_ request: ValidateRequest) async -> HarnessReply {
            do { try await ensureStarted() } catch {
                return .failed(seq: request.seq, failure: .crash, message: "the harness could not be restarted: \(error)")
            }
            return await withCheckedContinuation { continuation in
                dispatch(Waiting(request: request, continuation: continuation, generation: generation))
            }
        }

        /// Writes a request to the current harness and arms its timeout.
        private func dispatch(_ entry: Waiting) {
            let seq = entry.request.seq
            guard let child else {
                entry.continuation.resume(returning: .errored(seq: seq, message: "cannot send the request"))
                return
            }
            var line = entry.request.jsonLine
            line.append(0x0A)
            var entry = entry
            entry.deadline = ContinuousClock.now.advanced(by: timeout)
            waiting[seq] = entry
            order.append(seq)
            let generation = self.generation
            child.write(line) { Task { await self.inputRefused(seq, generation: generation) } }
            let timeout = self.timeout
            Task {
                try? await Task.sleep(for: timeout)
                await self.expire(seq, generation: generation)
            }
        }

        private func ensureStarted() async throws {
            if let starting { return try await starting.value }
            if child?.isRunning == true, declared != nil { return }
            let task = Task { try await self.start() }
            starting = task
            defer { starting = nil }
            try await task.value
        }

        /// Starts a harness and waits for its hello.
        private func start() async throws {
            kill()
            generation += 1
            let generation = self.generation
            awaitingHello = true
            bufferedHello = nil
            // Events reach the session in the order the harness wrote them: one stream, one consumer.
            let (events, sink) = AsyncStream.makeStream(of: LineReader.Event.self)
            let reader = LineReader(limit: HarnessLimits.maximumMessageBytes) { event in
                sink.yield(event)
                if case .line = event {} else { sink.finish() }
            }
            Task {
                for await event in events { await self.received(event, generation: generation) }
            }
            let child: ChildProcess
            do { child = try ChildProcess(command) { reader.feed($0) } } catch { throw HandshakeError(description: error.description) }
            self.child = child
            var hello = (try? JSONEncoder().encode(runnerHello)) ?? Data()
            hello.append(0x0A)
            child.write(hello)

            let helloTimeout = max(timeout, .seconds(HarnessLimits.minimumHelloSeconds))
            let line = await withTaskGroup(of: String?.self) { group in
                group.addTask { await self.awaitHelloLine() }
                group.addTask {
                    try? await Task.sleep(for: helloTimeout); await self.giveUpHello(); return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            if line == nil || !child.isRunning { await child.settle() }
            let stderr = child.stderrText
            let said = stderr.isEmpty ? "" : "; \(command[0]) said on stderr: \(stderr)"
            guard let line else {
                kill()
                throw HandshakeError(description: "no hello from \(command.joined(separator: " ")) within \(helloTimeout)\(said)")
            }
            if let violation = checker?.check(Data(line.utf8)) {
                kill()
                throw HandshakeError(description: "the hello breaks the protocol: \(violation)")
            }
            guard let decoded = try? JSONDecoder().decode(HarnessHello.self, from: Data(line.utf8)), decoded.type == HarnessProtocol.MessageType.hello.rawValue else {
                kill()
                throw HandshakeError(description: "expected a hello message, got: \(line.prefix(200))\(said)")
            }
            if declared == nil { declared = decoded }
        }

        private func awaitHelloLine() async -> String? {
            if let line = bufferedHello {
                bufferedHello = nil
                return line
            }
            guard awaitingHello else { return nil }
            return await withCheckedContinuation { helloWaiter = $0 }
        }

        private func giveUpHello() {
            awaitingHello = false
            helloWaiter?.resume(returning: nil)
            helloWaiter = nil
        }

        private func received(_ event: LineReader.Event, generation: Int) async {
            guard generation == self.generation else { return }
            switch event {
            case .line(let line): received(line)
            case .overlong:
                let violation = "\(HarnessLimits.overlong("a line")); the harness was restarted"
                if let oldest = order.first { finish(oldest, .errored(seq: oldest, message: violation)) }
                failAll(.crash, "the harness was restarted after writing an overlong line")
            case .end:
                giveUpHello()
                await child?.settle()  // its last words on stderr belong in the report
                guard generation == self.generation else { return }
                failAll(.crash, "the harness closed its output before answering (\(child?.exitDescription ?? "gone"))")
            }
        }

        private func received(_ line: String) {
            if awaitingHello {
                awaitingHello = false
                if let waiter = helloWaiter {
                    helloWaiter = nil
                    waiter.resume(returning: line)
                } else {
                    bufferedHello = line
                }
                return
            }
            let data = Data(line.utf8)
            if let reply = try? HarnessReply(json: data) {
                if waiting[reply.seq] != nil {
                    finish(reply.seq, checker?.check(data).map { .errored(seq: reply.seq, message: $0) } ?? reply)
                } else {
                    // A second reply, or one to a request never sent: the harness's fault, but no vector's.
                    unattributed("a reply to seq \(reply.seq), which is not waiting for one: \(line.prefix(HarnessLimits.quotedPrefix))")
                }
            } else if let charged = unreadableReplySeq(data) {
                // Under --validate-protocol the schema says what is wrong (`/verdict: expected one of accept, reject,
                // got "yes"`); without it, the line itself is quoted.
                let violation = checker?.check(data) ?? "protocol violation: the harness printed '\(line.prefix(HarnessLimits.quotedPrefix))'"
                finish(charged, .errored(seq: charged, message: violation))
            } else {
                unattributed("a line while no request was waiting: \(line.prefix(HarnessLimits.quotedPrefix))")
            }
        }

        /// The request an unreadable reply is charged to: the waiting one its `seq` names, else the oldest waiting.
        private func unreadableReplySeq(_ data: Data) -> Int? {
            if let named = (try? JSONValue(parsing: data))?["seq"]?.integerValue, let seq = Int(exactly: named), waiting[seq] != nil { return seq }
            return order.first
        }

        /// Protocol violations that belong to no request, for `StdioValidator.strayLines()`.
        private(set) var stray: [String] = []

        private func unattributed(_ violation: String) {
            let limit = HarnessLimits.maximumStrayLines
            if stray.count < limit { stray.append(violation) } else if stray.count == limit { stray.append("… and more") }
        }

        private func inputRefused(_ seq: Int, generation: Int) {
            guard generation == self.generation else { return }
            finish(seq, .failed(seq: seq, failure: .crash, message: withStderr("the harness stopped reading its input")))
        }

        /// A request's time is up: TIMEOUT for the oldest request whose time is up (a harness stuck on it
        /// holds the later ones back, and timers that fire together may run in any order); the harness is
        /// killed, and the others it held go to a new one.
        private func expire(_ seq: Int, generation: Int) async {
            guard let entry = waiting[seq], entry.generation == generation, generation == self.generation else { return }
            let now = ContinuousClock.now
            let culprit = order.first { waiting[$0].map { $0.deadline <= now } ?? false } ?? seq
            finish(culprit, .failed(seq: culprit, failure: .timeout, message: withStderr("no reply within \(timeout); the harness was killed and restarted")))
            let innocent = order.compactMap { waiting[$0] }
            waiting = [:]
            order = []
            kill()
            guard !innocent.isEmpty else { return }
            do { try await ensureStarted() } catch {
                for entry in innocent {
                    entry.continuation.resume(
                        returning: .failed(
                            seq: entry.request.seq, failure: .crash,
                            message: "the harness could not be restarted: \(error)"))
                }
                return
            }
            for entry in innocent { dispatch(Waiting(request: entry.request, continuation: entry.continuation, generation: self.generation)) }
        }

        private func finish(_ seq: Int, _ reply: HarnessReply) {
            guard let entry = waiting.removeValue(forKey: seq) else { return }
            order.removeAll { $0 == seq }
            entry.continuation.resume(returning: reply)
        }

        private func failAll(_ failure: HarnessReply.Failure, _ message: String) {
            let text = withStderr(message)
            for seq in order { finish(seq, .failed(seq: seq, failure: failure, message: text)) }
            kill()
        }

        private func withStderr(_ message: String) -> String {
            let stderr = child?.stderrText ?? ""
            return stderr.isEmpty ? message : "\(message); stderr: \(stderr)"
        }

        private func kill() {
            guard let child else { return }
            self.child = nil
            generation += 1
            child.closeInput()
            child.kill()
        }

        func shutdown() async {
            guard let child else { return }
            self.child = nil
            generation += 1
            var stop = (try? JSONEncoder().encode(StopMessage())) ?? Data()
            stop.append(0x0A)
            child.write(stop)
            await child.terminate(grace: HarnessLimits.stopGrace)
        }
    }
}

/// Splits a harness's stdout into lines, refusing to buffer a line beyond `limit`.
private final class LineReader: Sendable {
    enum Event: Sendable {
        case line(String)
        case overlong
        case end
    }

    private struct State {
        var buffer = Data()
        var stopped = false
    }
    /// Fed by the one thread that drains stdout, so never contended; the lock makes that a checked fact.
    private let state = Mutex(State())
    private let limit: Int
    private let emit: @Sendable (Event) -> Void

    init(limit: Int, emit: @escaping @Sendable (Event) -> Void) {
        self.limit = limit
        self.emit = emit
    }

    func feed(_ chunk: Data?) {
        for event in state.withLock({ Self.split(chunk, into: &$0, limit: limit) }) { emit(event) }
    }

    private static func split(_ chunk: Data?, into state: inout State, limit: Int) -> [Event] {
        guard !state.stopped else { return [] }
        guard let chunk else {
            state.stopped = true
            return [.end]
        }
        var events: [Event] = []
        // Only the new bytes can hold a newline: scanning the whole buffer again would be quadratic.
        var lineStart = state.buffer.startIndex
        var searchFrom = state.buffer.endIndex
        state.buffer.append(chunk)
        while let newline = state.buffer[searchFrom...].firstIndex(of: 0x0A) {
            let line = String(decoding: state.buffer[lineStart..<newline], as: UTF8.self)
            if !line.trimmingWhitespace().isEmpty { events.append(.line(line)) }
            lineStart = state.buffer.index(after: newline)
            searchFrom = lineStart
        }
        state.buffer.removeSubrange(state.buffer.startIndex..<lineStart)
        if state.buffer.count > limit {
            state.stopped = true
            state.buffer = Data()
            events.append(.overlong)
        }
        return events
    }
}
