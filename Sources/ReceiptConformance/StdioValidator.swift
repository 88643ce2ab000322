import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `stdio:` transport: one persistent harness process speaking NDJSON, one message per line.
///
/// Replies are matched by `seq`, so a harness may answer out of order. A reply that does not come
/// within the timeout is a TIMEOUT and the harness is killed (with its process group) and restarted;
/// a harness that exits or closes stdout mid-run fails what it owed as CRASH and is restarted too. A
/// line that is not a reply is a protocol violation charged to the oldest request still waiting.
public final class StdioValidator: ReceiptValidator, @unchecked Sendable {
    // Mutable state lives in `session`, an actor; these stored properties never change after init.
    public let command: [String]
    public let timeout: Duration
    private let session: Session

    public init(command: [String], timeout: Duration = .seconds(2), checker: ProtocolViolationCheck? = nil) {
        self.command = command
        self.timeout = timeout
        self.session = Session(command: command, checker: checker)
    }

    public func hello() async throws -> HarnessHello {
        try await session.handshake(timeout: timeout)
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        await session.send(request, timeout: timeout)
    }

    /// Ends the harness: `stop`, then the process group is killed if it lingers.
    public func stop() async { await session.shutdown() }

    /// Why the handshake failed.
    public struct HandshakeError: Error, CustomStringConvertible {
        public let description: String
    }

    actor Session {
        let command: [String]
        private var process: Process?
        private var input: FileHandle?
        private var generation = 0
        private var pending: [Int: CheckedContinuation<HarnessReply, Never>] = [:]
        private var order: [Int] = []
        private var helloWaiter: CheckedContinuation<String?, Never>?
        /// The first line after a start is the hello; it may arrive before anyone waits for it.
        private var awaitingHello = false
        private var bufferedHello: String?
        private var hello: HarnessHello?

        let checker: ProtocolViolationCheck?

        init(command: [String], checker: ProtocolViolationCheck?) {
            self.command = command
            self.checker = checker
        }

        func handshake(timeout: Duration) async throws -> HarnessHello {
            try start()
            let line = await withTaskGroup(of: String?.self) { group in
                group.addTask { await self.awaitHelloLine() }
                group.addTask { try? await Task.sleep(for: timeout); await self.giveUpHello(); return nil }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            guard let line else {
                kill()
                throw HandshakeError(description: "no hello from \(command.joined(separator: " ")) within \(timeout)")
            }
            if let violation = checker?.check(Data(line.utf8)) {
                kill()
                throw HandshakeError(description: "the hello breaks the protocol: \(violation)")
            }
            guard let decoded = try? JSONDecoder().decode(HarnessHello.self, from: Data(line.utf8)), decoded.type == "hello" else {
                kill()
                throw HandshakeError(description: "expected a hello message, got: \(line.prefix(200))")
            }
            hello = decoded
            return decoded
        }

        private func awaitHelloLine() async -> String? {
            if let line = bufferedHello {
                bufferedHello = nil
                return line
            }
            return await withCheckedContinuation { helloWaiter = $0 }
        }

        private func giveUpHello() {
            helloWaiter?.resume(returning: nil)
            helloWaiter = nil
        }

        func send(_ request: ValidateRequest, timeout: Duration) async -> HarnessReply {
            if process?.isRunning != true {
                do { try start(); try await rehello(timeout: timeout) } catch {
                    return .failed(seq: request.seq, failure: .crash, message: "the harness could not be restarted: \(error)")
                }
            }
            guard let json = try? JSONEncoder().encode(request), let input else {
                return .errored(seq: request.seq, message: "cannot encode the request")
            }
            let seq = request.seq
            let generation = self.generation
            return await withCheckedContinuation { continuation in
                pending[seq] = continuation
                order.append(seq)
                do { try input.write(contentsOf: json + Data("\n".utf8)) } catch {
                    finish(seq, .failed(seq: seq, failure: .crash, message: "the harness closed its input: \(error.localizedDescription)"))
                    return
                }
                Task {
                    try? await Task.sleep(for: timeout)
                    self.expire(seq, generation: generation, timeout: timeout)
                }
            }
        }

        private func rehello(timeout: Duration) async throws {
            _ = try await handshake(timeout: timeout)
        }

        private func expire(_ seq: Int, generation: Int, timeout: Duration) {
            guard pending[seq] != nil, generation == self.generation else { return }
            finish(seq, .failed(seq: seq, failure: .timeout, message: "no reply within \(timeout); the harness was restarted"))
            restartAfterFailure()
        }

        private func finish(_ seq: Int, _ reply: HarnessReply) {
            guard let continuation = pending.removeValue(forKey: seq) else { return }
            order.removeAll { $0 == seq }
            continuation.resume(returning: reply)
        }

        /// A line from the harness's stdout (called from the reader thread's task).
        func received(_ line: String, generation: Int) {
            guard generation == self.generation else { return }
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
            if let reply = try? JSONDecoder().decode(HarnessReply.self, from: Data(line.utf8)), pending[reply.seq] != nil {
                if let violation = checker?.check(Data(line.utf8)) {
                    finish(reply.seq, .errored(seq: reply.seq, message: violation))
                } else {
                    finish(reply.seq, reply)
                }
            } else if let oldest = order.first {
                finish(oldest, .errored(seq: oldest, message: "protocol violation: the harness printed '\(line.prefix(120))'"))
            }
        }

        /// The harness's stdout closed: it owes nothing more in this generation.
        func closed(generation: Int) {
            guard generation == self.generation else { return }
            giveUpHello()
            for seq in order { finish(seq, .failed(seq: seq, failure: .crash, message: "the harness exited or closed its output before answering")) }
            kill()
        }

        private func restartAfterFailure() {
            for seq in order { finish(seq, .failed(seq: seq, failure: .crash, message: "the harness was restarted after another request timed out")) }
            kill()
        }

        private func start() throws {
            kill()
            generation += 1
            awaitingHello = true
            bufferedHello = nil
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
            let stdin = Pipe(), stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            input = stdin.fileHandleForWriting
            try input?.write(contentsOf: Data(#"{"type":"hello","protocol":1}"#.utf8 + [0x0A]))
            let generation = self.generation
            let reader = stdout.fileHandleForReading
            // Lines are read on a Dispatch thread: a blocking read must not hold a cooperative thread.
            DispatchQueue.global().async { [weak self] in
                var buffer = Data()
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                        buffer.removeSubrange(buffer.startIndex...newline)
                        if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                            Task { await self?.received(line, generation: generation) }
                        }
                    }
                }
                Task { await self?.closed(generation: generation) }
            }
        }

        private func kill() {
            guard let process else { return }
            self.process = nil
            try? input?.close()
            input = nil
            if process.isRunning {
                Glibc.kill(-process.processIdentifier, SIGKILL)
                Glibc.kill(process.processIdentifier, SIGKILL)
            }
        }

        func shutdown() {
            if let input { try? input.write(contentsOf: Data(#"{"type":"stop"}"#.utf8 + [0x0A])) }
            kill()
        }
    }
}
