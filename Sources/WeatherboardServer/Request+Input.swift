import Foundation
import Hummingbird
import Vocabulary

extension Request {
    /// Decodes a JSON body. Bad JSON (or not UTF-8) is 400 `bad_request`; well-formed JSON with a missing or
    /// mistyped field is 422 `invalid_field` naming the field.
    func decodeJSON<T: Decodable>(as type: T.Type, context: AppRequestContext) async throws -> T {
        let buffer = try await body.collect(upTo: context.maxUploadSize)
        let data = Data(buffer.readableBytesView)
        if data.isEmpty { throw APIError.badRequest("a JSON body is required") }
        guard String(data: data, encoding: .utf8) != nil else { throw APIError.badRequest("the body is not valid UTF-8") }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            // A raw NUL byte inside a string makes the JSON invalid; if that is all that is wrong with it,
            // name the field it is in (422) like the escaped `\u0000` below.
            try InputText.checkRawNUL(data)
            throw APIError.badRequest("the body is not valid JSON")
        }
        try InputText.checkJSON(object)
        do {
            return try JSONCoding.decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            throw Self.translate(error)
        }
    }

    static func translate(_ error: DecodingError) -> APIError {
        func path(_ context: DecodingError.Context, _ extra: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (extra.map { [$0] } ?? [])
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "body" : text.replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .invalidField(path(context, key), "is required")
        case .valueNotFound(_, let context):
            return .invalidField(path(context), "must not be null")
        case .typeMismatch(let type, let context):
            let expected = type == String.self ? "a string" : (type == Double.self || type == Int.self ? "a number" : "a \(type)")
            return .invalidField(path(context), "must be \(expected)")
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? .badRequest("the body is not valid JSON") : .invalidField(path(context), "has an invalid value")
        @unknown default:
            return .badRequest("the body could not be read")
        }
    }

    /// The page size: default 20, any all-digit value above 100 (however large) clamped to 100; 0, a sign or
    /// anything but digits is 400 (`PageLimit`).
    func pageLimit() throws -> Int {
        guard let limit = PageLimit.parse(uri.queryParameters.get("limit")) else { throw APIError.badRequest("limit must be a positive integer") }
        return limit
    }

    /// The decoded `cursor`, if any; garbage is 400.
    func cursor() throws -> Int? {
        guard let raw = uri.queryParameters.get("cursor"), !raw.isEmpty else { return nil }
        guard let id = Cursor.decode(raw) else { throw APIError.badRequest("cursor is not valid; use nextCursor from a previous page") }
        return id
    }

    /// An optional query value that must be one of a closed set.
    func queryValue<T: RawRepresentable>(_ name: String, as type: T.Type, allowed: (T) -> Bool = { _ in true }) throws -> T? where T.RawValue == String {
        guard let raw = uri.queryParameters.get(name) else { return nil }
        guard let value = T(rawValue: String(raw)), allowed(value) else {
            throw APIError.badRequest("\(name) '\(raw)' is not a known value")
        }
        return value
    }

    /// An optional query id (`regionId=`, `authorId=`): exactly an id the server gave (`CanonicalID`);
    /// anything else (`+5`, `05`, `5 `) is 400.
    func queryID(_ name: String) throws -> Int? {
        guard let raw = uri.queryParameters.get(name) else { return nil }
        guard let id = CanonicalID.parse(raw) else { throw APIError.badRequest("\(name) is not a valid id") }
        return id
    }

    /// `include=` values (comma-separated); anything but the allowed ones is 400.
    func includes(allowed: Set<String>) throws -> Set<String> {
        guard let raw = uri.queryParameters.get("include") else { return [] }
        let values = Set(raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard !values.isEmpty, values.isSubset(of: allowed) else {
            throw APIError.badRequest("include must be one of: \(allowed.sorted().joined(separator: ", "))")
        }
        return values
    }

    /// The display language, from `Accept-Language` (read once per handler and passed on).
    var language: Language { Language(acceptLanguage: headers[.acceptLanguage]) }

    var idempotencyKey: String? { headers[.idempotencyKey] }
}

extension AppRequestContext {
    /// A path id: exactly an id the server gave (`CanonicalID`); anything else (`+5`, `05`) names nothing, 404.
    func pathID(_ name: String = "id", _ what: String) throws -> Int {
        guard let raw = parameters.get(name), let id = CanonicalID.parse(raw) else { throw APIError.notFound(what) }
        return id
    }
}
