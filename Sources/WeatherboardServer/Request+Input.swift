import Foundation
import Hummingbird
import Vocabulary

extension Request {
    /// Decodes a JSON body, read once and parsed once. Bad JSON (or not UTF-8) is 400 `bad_request`;
    /// well-formed JSON with a missing or mistyped field is 422 `invalid_field` naming the field. A body that
    /// may hold a NUL (a raw zero byte, or the escape `\u0000`: rare, and always refused) is parsed a second
    /// time, by `InputText`, to name the field it is in.
    func decodeJSON<T: Decodable>(as type: T.Type, context: AppRequestContext) async throws -> T {
        let buffer = try await body.collect(upTo: context.maxUploadSize)
        return try JSONCoding.decodeBody(Data(buffer.readableBytesView), as: type)
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

extension JSONCoding {
    /// A request body, once read (`Request.decodeJSON`): the value, or an `APIError`, 400 `bad_request` or 422
    /// `invalid_field`, never another error.
    static func decodeBody<T: Decodable>(_ data: Data, as type: T.Type) throws -> T {
        if data.isEmpty { throw APIError.badRequest("a JSON body is required") }
        if InputText.mayHoldNUL(data) { try InputText.checkJSONBody(data) }
        do {
            return try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            // Checked only on the way out: the decoder reads UTF-8 and fails on anything else.
            if String(data: data, encoding: .utf8) == nil { throw APIError.badRequest("the body is not valid UTF-8") }
            throw Request.translate(error)
        }
    }
}
