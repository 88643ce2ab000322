// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),  // SE-0335
    .enableUpcomingFeature("MemberImportVisibility"),  // SE-0444
    .enableUpcomingFeature("InternalImportsByDefault"),  // SE-0409
]

// swift-system's FilePath, which swift-subprocess takes; Apple platforms have it in their SDK's System instead.
let systemPackage: Target.Dependency = .product(
    name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux, .windows, .android, .wasi, .openbsd]))

// Dependencies point down: forge → ForgeCLI → ReferenceValidation / StoreForge → StoreModel + ReceiptModel + JWSModel
// + ForgeCrypto → AppStoreVocabulary / _ForgeSupport; StoreForge also → ReceiptCorpus (Foundation, _ForgeSupport and
// AppStoreVocabulary), which the runner stands on without the store model. The network (swift-nio, BoringSSL,
// Hummingbird) and SQLite are linked only by forge-http, which forge hands HTTP work over to: `swift run forge make`
// on a fresh clone compiles none of it.
let package = Package(
    name: "receipt-forge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "forge", targets: ["forge"]),
        .executable(name: "forge-http", targets: ["forge-http"]),
        // What outsiders consume, and nothing else: the corpus model, the conformance runner, and the forge for forging
        // in tests (with the store model its API takes). The other targets are the package's own: `package`, unless a shipped API shows them.
        .library(name: "ReceiptCorpus", targets: ["ReceiptCorpus", "AppStoreVocabulary"]),
        .library(name: "ReceiptConformance", targets: ["ReceiptConformance"]),
        // The runner's http(s):// transport (`HTTPTargets`), apart so that only those who judge HTTP validators link swift-nio.
        .library(name: "ReceiptConformanceHTTP", targets: ["ReceiptConformanceHTTP"]),
        .library(name: "StoreForge", targets: ["StoreForge", "StoreModel", "AppStoreVocabulary"]),
        // For FuzzTesting/Package.swift only, as swift-certificates' `_CertificateInternals`: the targets its fuzzers drive, which
        // they `@testable import` where the API is `package` (scripts/fuzz.sh builds with -enable-testing). No API promise.
        .library(name: "_ForgeFuzzingInternals", targets: ["ForgeCrypto", "HTTPServers", "JWSModel", "ReceiptModel", "ReferenceValidation", "StoreServer", "_ForgeSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.6.0"),
        // HTTP only where it is spoken: the runner's http(s):// transport and the servers.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // The servers (`forge serve`, `forge validate --listen`): routing, middleware, TLS, graceful shutdown. Without its
        // default traits: swift-configuration (20,000 lines compiled in every build, for a configuration reader forge does
        // not use) and full Foundation (URL-encoded forms, which forge does not read).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.20.0", traits: []),
        // Already built for Hummingbird; named for the service group the servers run in.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        // Already built for Hummingbird; named for the typed HTTP parts the servers' read deadlines watch.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        // Already built for Hummingbird; named for the logger the servers hand Hummingbird.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        // Already built for Hummingbird; named for the typed methods the servers' routes take and the header fields the
        // in-process test client (ApplicationTesting) builds.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The tests' processes: run asynchronously with a deadline, so no test blocks a cooperative thread.
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        // Already built for swift-subprocess; named for the FilePath its configurations take (`systemPackage` above).
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
    ],
    targets: [
        // libcrypto from the system (apt libssl-dev); imported only by ForgeCrypto.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // libssl from the system (the same apt libssl-dev); imported only by ForgeTLS, linked by forge-http only.
        .systemLibrary(name: "CTLS", pkgConfig: "openssl", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // libsqlite3 from the system (apt libsqlite3-dev); imported only by StoreServerSQLite, linked by forge-http only.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // renameat2(RENAME_EXCHANGE) / renamex_np(RENAME_SWAP), which Glibc's Swift module does not export: a staged
        // folder replaces its target in one step (StagedFolder).
        .target(name: "CForgeSystem"),
        // Keys, X.509 issuance, raw RSA PKCS#1 v1.5, digests, chain verification over OpenSSL.
        .target(name: "ForgeCrypto", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        // What every layer shares and no domain owns: JSON, the coded-error pattern, hex, base64url, Apple's date
        // formats, the seeded generator. Foundation only.
        // Underscored, as swift-certificates' `_CertificateInternals`: the package's own, no domain, no API promise.
        .target(name: "_ForgeSupport", dependencies: ["CForgeSystem"], swiftSettings: swiftSettings),
        // Apple's values that the syntax, the corpus and the store model all speak, below each of them: environments,
        // receipt types, the kinds of signed data (JWSKind), ownership, and renewal info (pending_renewal_info, StoreKit 2's
        // renewal info) with its enums. No domain logic.
        .target(name: "AppStoreVocabulary", swiftSettings: swiftSettings),
        // The store: the scenario (apps, devices, products, purchases, timeline), its typed vocabulary (product and
        // notification types) and the state it resolves to. Every artefact renders this one model.
        // Also the forge's error (`ForgeError`): everything that throws it is the store model or above.
        .target(name: "StoreModel", dependencies: ["AppStoreVocabulary", "_ForgeSupport"], swiftSettings: swiftSettings),
        // The receipt as bytes: BER in, DER or chosen BER out; verifyReceipt's JSON of it. No crypto, no store model.
        .target(name: "ReceiptModel", dependencies: ["AppStoreVocabulary", "_ForgeSupport"], swiftSettings: swiftSettings),
        // The JWS as text: compact serialization and its size bounds. No crypto.
        .target(name: "JWSModel", dependencies: ["_ForgeSupport"], swiftSettings: swiftSettings),
        // The corpus model (manifest, vectors, lint, schemas): Foundation, _ForgeSupport and AppStoreVocabulary (the typed
        // environment) only, so outside validators can use it without OpenSSL or the store model.
        .target(name: "ReceiptCorpus", dependencies: ["AppStoreVocabulary", "_ForgeSupport"], swiftSettings: swiftSettings),
        // Renders the store model as signed artefacts from the bundled TEST PKIs: receipts (RSA, PKCS#7) and StoreKit 2 JWS
        // (ES256); the mutations, the vector catalogue and the mutant generator.
        .target(
            name: "StoreForge", dependencies: ["StoreModel", "AppStoreVocabulary", "ReceiptModel", "JWSModel", "_ForgeSupport", "ForgeCrypto", "ReceiptCorpus", "CForgeSystem"],
            swiftSettings: swiftSettings),
        // TLS for swift-nio channels over the system's OpenSSL: the servers' `--tls`, the runner's https:// targets and
        // the webhooks notifications go to. Not NIOSSL, whose BoringSSL costs ~240 CPU-seconds of every CI run.
        .target(
            name: "ForgeTLS", dependencies: ["CTLS", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOTLS", package: "swift-nio")], swiftSettings: swiftSettings),
        // The conformance runner: judges any validator as a black box. Never imports the models or crypto, nor links the
        // store model (LayeringTests checks the closure).
        .target(name: "ReceiptConformance", dependencies: ["ReceiptCorpus", "_ForgeSupport"], swiftSettings: swiftSettings),
        // The http(s):// transport: the harness protocol over POST, or a verifyReceipt-style endpoint through a response mapping.
        .target(
            name: "ReceiptConformanceHTTP",
            dependencies: [
                "ReceiptConformance", "_ForgeSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                "ForgeTLS",
            ],
            swiftSettings: swiftSettings),
        // The reference validators (receipts and StoreKit 2 JWS), the inspector and the validation cache. Never the runner:
        // the harness that serves them to it (ReferenceHarness) is ReceiptValidationServer's.
        .target(
            name: "ReferenceValidation",
            dependencies: ["ReceiptModel", "JWSModel", "StoreModel", "AppStoreVocabulary", "_ForgeSupport", "ForgeCrypto", "ReceiptCorpus"],
            swiftSettings: swiftSettings),
        // What `forge serve` answers, socket-free: ServeConfiguration (the command line as a value) and the parts it builds,
        // verifyReceipt, the App Store Server API, notifications, faults, the request log.
        .target(
            name: "StoreServer",
            dependencies: ["ReferenceValidation", "StoreForge", "ReceiptModel", "StoreModel", "AppStoreVocabulary", "_ForgeSupport", "ReceiptCorpus", "ForgeCrypto", "JWSModel"],
            swiftSettings: swiftSettings),
        // The reference validator served: in process to the runner (ReferenceHarness, `swift:reference`), over stdio
        // (`forge validate --harness`) and the HTTP routes (harness protocol and verifyReceipt) independent of any socket library.
        .target(
            name: "ReceiptValidationServer",
            dependencies: ["ReferenceValidation", "StoreServer", "ReceiptConformance", "ReceiptCorpus", "ReceiptModel", "StoreModel", "_ForgeSupport", "ForgeCrypto"],
            swiftSettings: swiftSettings),
        // The HTTP servers on Hummingbird: `forge serve` and `forge validate --listen`, each put together in one place
        // (`ForgeServers`), one controller per route group; the `--state` file's SQLite store is built there too.
        .target(
            name: "HTTPServers",
            dependencies: [
                "StoreServer", "StoreServerSQLite", "ReceiptValidationServer", "StoreForge", "ReceiptModel", "StoreModel", "_ForgeSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), "ForgeTLS",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        // `forge serve --state FILE`: the server state kept in SQLite, through SQLite's C API (a wrapper of one file: GRDB's
        // 71,000 lines cost 30 s of CPU in every debug build and 60 s in every release build, for a dozen statements).
        .target(
            name: "StoreServerSQLite", dependencies: ["StoreServer", "StoreModel", "_ForgeSupport", "CSQLite"],
            swiftSettings: swiftSettings),
        // The commands, shared by both executables; no network code (see NetworkSupport).
        .target(
            name: "ForgeCLI",
            dependencies: [
                "StoreForge", "ReferenceValidation", "ReceiptModel", "JWSModel", "ReceiptCorpus", "ReceiptConformance",
                "ReceiptValidationServer", "StoreServer", "StoreModel", "AppStoreVocabulary", "_ForgeSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings),
        .executableTarget(name: "forge", dependencies: ["ForgeCLI", "StoreModel", "_ForgeSupport"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "forge-http",
            dependencies: [
                "ForgeCLI", "ReceiptConformance", "ReceiptConformanceHTTP", "ReceiptValidationServer", "StoreServer", "HTTPServers",
                "StoreModel", "_ForgeSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),

        // What every test target shares: the repository, the built binaries, temporary folders, oracles as traits,
        // and processes, servers and waits that never block a thread and always have a deadline.
        .target(
            name: "ForgeTestSupport",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                systemPackage,
            ],
            path: "Tests/ForgeTestSupport", swiftSettings: swiftSettings),
        .testTarget(name: "ForgeCryptoTests", dependencies: ["ForgeCrypto", "ForgeTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "ReceiptModelTests", dependencies: ["ReceiptModel", "JWSModel", "StoreModel", "_ForgeSupport", "ForgeTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "ReceiptCorpusTests", dependencies: ["ReceiptCorpus", "AppStoreVocabulary", "_ForgeSupport", "ForgeTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ReceiptConformanceTests",
            dependencies: [
                "ReceiptConformance", "ReceiptCorpus", "ReferenceValidation", "StoreForge", "ReceiptModel", "StoreModel", "AppStoreVocabulary", "_ForgeSupport",
                "ForgeCrypto", "ReceiptValidationServer", "ForgeTestSupport",
            ],
            swiftSettings: swiftSettings),
        // Fixtures/ (the vector revision ledger) is read from the source tree by path, not bundled.
        .testTarget(
            name: "StoreForgeTests",
            dependencies: [
                "StoreForge", "ReferenceValidation", "ReceiptModel", "JWSModel", "StoreModel", "AppStoreVocabulary", "_ForgeSupport", "ForgeCrypto", "ReceiptCorpus",
                "ReceiptConformance", "StoreServer", "ReceiptValidationServer", "ForgeTestSupport",
            ],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        // The servers in process, through the same `build…Application` as forge-http (`app.test(.router)`, ApplicationTesting.swift,
        // on Hummingbird's public API: HummingbirdTesting would link AsyncHTTPClient and NIOSSL), and the state file through SQLite.
        .testTarget(
            name: "HTTPServersTests",
            dependencies: [
                "HTTPServers", "StoreServer", "StoreForge", "ReferenceValidation", "ReceiptValidationServer", "_ForgeSupport", "StoreServerSQLite", "StoreModel",
                "AppStoreVocabulary",
                "ForgeCrypto", "ForgeTestSupport", "ForgeTLS", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        // Runs the built `forge` (and `forge-http`) binaries, real files, and openssl as an independent oracle; reads ../shared/interop when present.
        .testTarget(
            name: "ForgeCLITests",
            dependencies: [
                "ForgeTestSupport", "forge", "forge-http", "ForgeCLI", "ReceiptModel", "StoreModel", "_ForgeSupport", "ReceiptConformance", "ReceiptConformanceHTTP", "StoreServer",
                "AppStoreVocabulary",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings),
    ]
)
