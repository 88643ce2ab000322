import Foundation
import ReceiptCorpus
import Testing
import ForgeTestSupport

/// The one port `online` vectors name is fixed by committed certificates, so it must be one the host never hands
/// out by chance: inside the ephemeral range, any outgoing connection or `:0` listener (a test's server, a
/// validator's HTTP call) could hold it when `forge run` starts its responder, and the run would be exit 2.
@Suite("The online vectors' OCSP port", .timeLimit(.minutes(2)))
struct OnlinePortTests {
    /// Ephemeral ranges: Linux's default, IANA's (BSD, macOS, Windows).
    static let ephemeral: [ClosedRange<Int>] = [32768...60999, 49152...65535]

    @Test("lies below every system's ephemeral range, and below this host's (/proc/sys/net/ipv4/ip_local_port_range)")
    func outsideEphemeralRanges() throws {
        var ranges = Self.ephemeral
        if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) {
            let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            if bounds.count == 2, bounds[0] <= bounds[1] { ranges.append(bounds[0]...bounds[1]) }
        }
        for range in ranges { #expect(!range.contains(OCSPContext.port), "port \(OCSPContext.port) is in the ephemeral range \(range)") }
        #expect(OCSPContext.port > 1023, "a privileged port would need root to serve")
    }

    @Test("every online vector of the committed corpus names the responder on that port")
    func corpusNamesThePort() throws {
        let manifest = try ManifestIO.load(from: Repository.vectors)
        let responders = Set(manifest.vectors.compactMap(\.context.ocsp?.responder))
        #expect(responders == [OCSPContext.bundledResponder])
        #expect(OCSPContext.bundledResponder == "http://127.0.0.1:\(OCSPContext.port)")
    }
}
