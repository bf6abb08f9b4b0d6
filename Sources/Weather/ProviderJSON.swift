import Foundation

/// How every provider reads its JSON answer: an unreadable one is a `malformed` provider failure, named by its
/// source. What was read is then checked value by value (`Plausible`).
enum ProviderJSON {
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], source: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch {
            throw ProviderError(.malformed, "\(source): unreadable body (\(error))")
        }
    }
}
