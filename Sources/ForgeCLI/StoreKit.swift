import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
import StoreModel

/// Reads a `.storekit` file for any command: a file it cannot use exits 65 naming the JSON path; a `--product` the
/// file does not define exits 64 listing the ids it does.
func loadStoreKit(_ path: String, products ids: [String] = []) throws -> StoreKitConfiguration {
    let (bytes, _) = try readInput(path, kind: .json)
    do {
        let configuration = try StoreKitConfiguration.read(bytes)
        _ = try configuration.products(named: ids)
        return configuration
    } catch {
        let place = error.keyPath.isEmpty ? "" : " (at \(error.keyPath))"
        // The message quotes the file's strings: shown, never acted on by the terminal.
        throw fail(TerminalText.escaped("\(path): \(error.message)\(place)"), error.code == .unknownProduct ? Exit.usage : Exit.dataError)
    }
}

/// `forge storekit`: what an Xcode StoreKit configuration file defines, and the scenario it makes.
struct StoreKitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storekit",
        abstract: "Read an Xcode StoreKit configuration file (.storekit): list its products, or write the scenario --spec takes.",
        discussion: """
            The products a team defined in Xcode drive everything forge makes: `--storekit FILE` on forge make, forge jws make, forge notify and forge serve adds the file's products to the scenario (what the scenario says itself, its storefront or a product it defines, wins), so `--product ID` picks one by its productID and takes its type, period, subscription group and level, price, storefront, introductory offer (free → a free trial, payAsYouGo → that many intro periods, payUpFront → one intro period of them all), promotional, offer-code and win-back offers (a purchase names one with --promo ID) and family sharing. forge serve also takes the file's _timeRate.

            Versions 2, 3 and 4 are read; keys forge does not use are passed over. A value of the wrong type or an impossible one (a product or a subscription group id defined twice too) exits 65 naming its JSON path; a --product the file does not define exits 64 listing the ids it does. show prints the file's ids and names with control characters and bidi controls escaped as \\u{…}; --json gives them exactly.

            Examples:
              forge storekit show examples/storekit/Products.storekit
              forge storekit scenario examples/storekit/Products.storekit --product com.example.pro.monthly -o scenario.json
              forge make --storekit examples/storekit/Products.storekit --product com.example.pro.monthly --renewals 2 -o receipt.der
            """,
        subcommands: [Show.self, ScenarioCommand.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "List the file's products, subscription groups and offers.")

        @Argument(help: ArgumentHelp("The .storekit file.", valueName: "file"))
        var file: String
        @Flag(help: "Print the products as JSON (the scenario's `products`) with the groups, storefront and time rate.")
        var json = false

        func run() throws {
            let configuration = try loadStoreKit(file)
            if json {
                let listed: JSONValue
                do { listed = try configuration.listingJSON() } catch { throw fail("cannot write the products as JSON: \(error)", Exit.software) }
                print(listed.serialized(pretty: true))
            } else {
                let storefront = configuration.listedStorefront
                print(
                    "version \(configuration.version); storefront \(storefront.code) (\(storefront.id), \(storefront.currency))"
                        + (configuration.timeRate.map { "; time rate \($0) (forge serve --time-rate \(Int($0.storeSecondsPerSecond)))" } ?? ""))
                for line in configuration.listing() { print(line) }
            }
        }
    }

    struct ScenarioCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scenario",
            abstract: "Write the scenario JSON --spec takes: the file's products and storefront, and a purchase of each --product.",
            discussion: """
                Without --product, every product is bought once, except that of each subscription group only the first subscription is (a customer holds one of a group at a time). Add a "timeline" to the output and pass it to --spec or forge serve --scenario.
                """)

        @Argument(help: ArgumentHelp("The .storekit file.", valueName: "file"))
        var file: String
        @Option(name: .customLong("product"), help: ArgumentHelp("A product bought (repeatable).", valueName: "id"))
        var products: [String] = []
        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Output file (all or nothing). Default: stdout.", valueName: "file"))
        var output: String?

        func run() throws {
            let configuration = try loadStoreKit(file, products: products)
            let scenario: Scenario
            do { scenario = try configuration.scenario(purchasing: products) } catch { throw fail(error.message, Exit.usage) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(scenario) else { throw fail("cannot encode the scenario", Exit.software) }
            if let output { try writeOutput(data + Data("\n".utf8), to: output) } else { print(String(decoding: data, as: UTF8.self)) }
        }
    }
}
