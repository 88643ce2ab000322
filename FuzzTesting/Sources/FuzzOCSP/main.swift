import Foundation
import FuzzSupport
import StoreForge
@testable import StoreServer

/// Made once, lazily: LeakSanitizer reads what a one-time initializer (`_WZ`) allocates as not leaked (lsan.supp).
enum Fixture {
    static let service = try? OCSPService(clock: { Date(timeIntervalSince1970: 1_735_689_600) })
}

/// `forge serve --ocsp` on arbitrary input. The first byte picks what the rest is: a POSTed request (its DER), a GET's
/// path (the base64 request in its last segment), a path then 0x00 then a request (an answer the path names), or a
/// control-route spec (`CERT=ANSWER`) applied before the bundled leaf is asked about in the rest of the input.
func fuzzOCSP(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let service = Fixture.service, let mode = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    switch mode % 4 {
    case 0:
        _ = service.respond(path: "", request: rest)
    case 1:
        let path = String(decoding: rest, as: UTF8.self)
        if let request = OCSPService.getRequest(path: path) { _ = service.respond(path: path, request: request) }
    case 2:
        let split = rest.firstIndex(of: 0) ?? rest.count
        let request = split < rest.count ? Array(rest[(split + 1)...]) : []
        _ = service.respond(path: String(decoding: rest[..<split], as: UTF8.self), request: request)
    default:
        let split = rest.firstIndex(of: 0) ?? rest.count
        if (try? service.set(spec: String(decoding: rest[..<split], as: UTF8.self))) != nil {
            _ = service.table
            _ = service.respond(path: "", request: split < rest.count ? Array(rest[(split + 1)...]) : [])
            service.reset()
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzOCSP(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
