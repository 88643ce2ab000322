#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `String(format:)` through the C library's vsnprintf, in the C locale as Foundation's is without one
/// (`%.2f` writes a point): String(format:) is Foundation proper, which links ICU (issue 41).
public func printfFormat(_ format: String, _ arguments: any CVarArg...) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    while true {
        let needed = withVaList(arguments) { list in
            buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, list) }
        }
        guard needed >= 0 else { return "" }
        if Int(needed) < buffer.count {
            return String(decoding: buffer.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        buffer = [CChar](repeating: 0, count: Int(needed) + 1)
    }
}
