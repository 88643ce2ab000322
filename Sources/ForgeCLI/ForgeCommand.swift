import ArgumentParser
import StoreModel
import _ForgeSupport
import ReferenceValidation
import StoreServer

/// The command line of both executables: `forge`, which links no network code, and `forge-http`, which
/// passes what it links for HTTP as `network`.
package enum ForgeCLI {
    package static func main(network: (any NetworkSupport)? = nil) async {
        Network.install(network)
        await ForgeCommand.main(ServeEnvironment.applied(to: normalized(Array(CommandLine.arguments.dropFirst()))))
    }

    /// The command line as the parser reads it. `--cancelled` takes an optional value (`--cancelled` or
    /// `--cancelled=app-issue`), which swift-argument-parser cannot express, so a bare `--cancelled` is
    /// rewritten before parsing. The documentation test parses through here too.
    static func normalized(_ arguments: [String]) -> [String] {
        arguments.map { $0 == "--cancelled" ? "--cancelled=other" : $0 }
    }
}

struct ForgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forge",
        abstract: "Test Apple in-app purchase validation: forge receipts and StoreKit 2 JWS, judge validators, stand in for Apple's servers.",
        discussion: """
            Everything is signed by bundled TEST PKIs, never by Apple: trust them in tests only.

              Forge    make (receipts), jws make (StoreKit 2 JWS), mutate, ca (TEST PKIs), storekit (Xcode .storekit files)
              Explain  inspect, validate, jws inspect, jws validate
              Judge    vectors (the corpus), run (any validator), seeds (fuzzing)
              Serve    serve (verifyReceipt, the App Store Server API, notifications to your webhook, OCSP, faults on demand; needs forge-http), notify (one notification to your webhook)
              Measure  bench

            Start with `forge make --product com.example.pro -o receipt.der` and `forge run --target swift:reference`; the README and Documentation/ explain the rest.

            Exit codes: 0 success (valid receipt), 1 invalid receipt (validate), 64 usage error or conflicting options, 65 unreadable input data, 66 input file missing, 69 unavailable: forge-http needed but not built, or a server cannot listen where asked (port in use, address not of this machine), 70 internal error, 73 cannot write output.
            """,
        version: "0.1.0",
        subcommands: [
            Make.self, Inspect.self, Validate.self, JWSCommand.self, VectorsCommand.self, Run.self, Serve.self, Notify.self, StoreKitCommand.self, Seeds.self, Mutate.self, CA.self,
            Bench.self,
        ])
}

/// The one mapping from what went wrong to the exit code, so the same error exits alike in every command
/// (`forge --help` lists the codes). Input that cannot be read is 66 and input too large 65 (``readInput``);
/// an unknown or miscased option value is 64 (ArgumentParser's usage error).
extension Exit {
    /// A forge error by its code: what was asked is wrong (64), the data given is wrong (65), the output
    /// cannot be written (73), or forge failed (70).
    static func code(for error: ForgeError) -> ExitCode {
        switch error.code {
        case .invalidScenario, .conflictingOptions: usage
        case .invalidRecipe, .certificateSetInvalid: dataError
        case .wouldOverwrite, .ioFailed: cannotCreate
        default: software
        }
    }

    /// A server that stopped on an error (`forge serve`, `validate --listen`): 69 when it could not listen where
    /// it was asked (the address is not to be had: EX_UNAVAILABLE, as a forge-http that is not built), else 70.
    static func serveFailure(_ error: any Error, host: String, port: Int) -> ExitCode {
        if let error = error as? ServeError {
            switch error.code {
            case .cannotListen: return fail("cannot listen on \(ServerAddress(host: host, port: port).authority): \(error.message)", unavailable)
            case .stateFailed, .logFailed: return fail(error.message, cannotCreate)
            case .invalidScenario: return fail(error.message, dataError)
            case .invalidFault: return fail(error.message, usage)
            case .cannotStart: return fail(error.message, software)
            case .tooManyFaults, .invalidClock: break
            }
        }
        return fail("cannot serve on \(ServerAddress(host: host, port: port).authority): \(error)", software)
    }

    /// A reference check (`validate`, `inspect`, `jws validate`): 0 valid, 1 invalid, 65 not the artefact at all.
    static func code(for report: some CheckedReport) -> ExitCode {
        if report.isUnreadable { return dataError }
        return report.verdict == .valid ? .success : invalid
    }
}
