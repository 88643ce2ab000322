import Hummingbird
import NIOCore
import NIOHTTP1
import StoreServer
import Synchronization
import _ForgeSupport
import StoreModel

/// The request bodies a server holds (read, not yet answered), over every connection: slow clients
/// cannot make it hold more than its limit, so twenty 30 MB uploads cost no more memory than three.
final class RequestBodies: Sendable {
    private let held = Mutex(0)
    let limit: Int

    init(limit: Int = ServerLimits.maximumBodyBytesInFlight) { self.limit = limit }

    /// A whole body, up to `maximum` bytes, held until `release`; or why not, in words.
    ///
    /// A declared `Content-Length` over the limit is refused before a byte is read; a body that ends
    /// short of its `Content-Length` (the connection closed) or breaks its framing is refused too, never
    /// answered as if it were whole.
    func collect(_ request: Request, maximum: Int) async throws(ServerRefusal) -> HeldBody {
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > maximum { throw .bodyTooLarge(limit: maximum) }
        var bytes: [UInt8] = []
        let body = HeldBody(owner: self)
        do {
            for try await chunk in request.body {
                guard bytes.count + chunk.readableBytes <= maximum else { throw ServerRefusal.bodyTooLarge(limit: maximum) }
                guard reserve(chunk.readableBytes) else { throw ServerRefusal.bodiesInFlight(limit: limit) }
                body.count += chunk.readableBytes
                bytes.append(contentsOf: chunk.readableBytesView)
            }
        } catch let refusal as ServerRefusal {
            body.release()
            throw refusal
        } catch let error as HTTPParserError {
            body.release()
            throw error == .invalidEOFState ? .bodyIncomplete(received: bytes.count, declared: declared) : .bodyNotChunked
        } catch {
            body.release()
            throw .bodyIncomplete(received: bytes.count, declared: declared)
        }
        if let declared, bytes.count != declared {
            body.release()
            throw .bodyIncomplete(received: bytes.count, declared: declared)
        }
        body.bytes = bytes
        return body
    }

    /// Body bytes read and not yet answered, over every connection: a test's signal that a body has been read.
    var bytesHeld: Int { held.withLock { $0 } }

    private func reserve(_ count: Int) -> Bool {
        held.withLock { held in
            guard held + count <= limit else { return false }
            held += count
            return true
        }
    }

    fileprivate func release(_ count: Int) { held.withLock { $0 -= count } }
}

/// A body read in full, counted against ``RequestBodies/limit`` until released.
final class HeldBody: @unchecked Sendable {
    private let owner: RequestBodies
    /// Set once, before the body is handed out.
    fileprivate(set) var bytes: [UInt8] = []
    fileprivate var count = 0

    fileprivate init(owner: RequestBodies) { self.owner = owner }

    /// Gives the bytes back to the budget (once; again does nothing).
    func release() {
        owner.release(count)
        count = 0
    }
}
