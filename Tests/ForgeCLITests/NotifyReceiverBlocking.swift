import Foundation
import ForgeTestSupport

// Temporary, for the lead: what main's NotificationDeliveryTests, ServerStateFileTests and OCSPTests still call in
// the files issue 37 converted. Their own conversion (branch i37-h4b) no longer calls it; once that is merged nothing
// does, and this file goes with BlockingServer.

extension NotifyTests {
    /// A receiver answering by `script`, recording into `record`, blocking (``receiver(answering:record:bundle:environment:app:)`` is the async one).
    static func receiver(_ script: String, record: URL, bundle: String = "com.example.app", environment: String = "sandbox", app: Int? = nil) throws
        -> BlockingServer
    {
        var arguments = [Self.receiver, "--root", JWSCLITests.root, "--bundle-id", bundle, "--environment", environment, "--script", script]
        arguments += ["--record", record.path] + (app.map { ["--app-apple-id", String($0)] } ?? [])
        return try BlockingServer(JWSCLITests.python, arguments)
    }
}

extension JWSCLITests {
    /// The Python of `.oracles/asl` (``Oracle/appleLibrary`` in converted tests).
    static let python = Repository.file(".oracles/asl/bin/python")
}
