import Board
import Foundation
import HTTPTypes
import Hummingbird

/// The one place where request text is checked for NUL (U+0000), before any of it can reach the data
/// layer (CONTRACT §1: text is never truncated, and libpq would cut a C string at its first NUL).
/// - a body field: 422 `invalid_field` naming the field (`Request.decodeJSON` walks the parsed JSON);
/// - a path segment, a query name or value, a header value: 400 (`InputTextMiddleware`).
/// `PostgresBind` refuses a NUL in any text parameter as the last line of defence.
enum InputText {
    /// Throws `invalid_field` naming the first string (or key) of a parsed JSON value that holds a NUL.
    /// Whether `data` may hold a NUL: a zero byte, or the text `\u0000` (which may also be an escaped
    /// backslash followed by `u0000`; `checkJSONBody` then finds nothing).
    static func mayHoldNUL(_ data: Data) -> Bool {
        data.contains(0) || data.range(of: Data(#"\u0000"#.utf8)) != nil
    }

    /// For a JSON body that may hold a NUL: throws `invalid_field` naming the field of the first one (422), or
    /// `bad_request` for a body that is not JSON at all; returns when it holds none.
    static func checkJSONBody(_ data: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            // A raw NUL byte inside a string makes the JSON invalid; if that is all that is wrong with it,
            // name the field it is in, like the escaped form.
            try checkRawNUL(data)
            throw APIError.badRequest("the body is not valid JSON")
        }
        try checkJSON(object)
    }

    static func checkJSON(_ value: Any) throws {
        if let field = nulField(in: value, path: "") {
            throw APIError.invalidField(field.isEmpty ? "body" : field, "must not contain a NUL character (U+0000)")
        }
    }

    /// For a body that is not valid JSON: when it holds raw NUL bytes and would be valid JSON with each
    /// written as the escape `\u0000`, throws `invalid_field` naming the field the first one is in.
    static func checkRawNUL(_ data: Data) throws {
        guard data.contains(0) else { return }
        var escaped = Data()
        escaped.reserveCapacity(data.count + 16)
        for byte in data {
            if byte == 0 { escaped.append(contentsOf: Array(#"\u0000"#.utf8)) } else { escaped.append(byte) }
        }
        guard let object = try? JSONSerialization.jsonObject(with: escaped, options: [.fragmentsAllowed]) else { return }
        try checkJSON(object)
    }

    /// The path of the first string holding a NUL, in `Request.translate`'s notation (`location.lat`,
    /// `mediaIds[0]`); keys are visited in sorted order so the answer does not depend on hashing.
    static func nulField(in value: Any, path: String) -> String? {
        switch value {
        case let string as String:
            return string.utf8.contains(0) ? path : nil
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                let child = path.isEmpty ? key : "\(path).\(key)"
                if key.utf8.contains(0) { return child }
                if let field = nulField(in: object[key] as Any, path: child) { return field }
            }
            return nil
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let field = nulField(in: element, path: "\(path)[\(index)]") { return field }
            }
            return nil
        default:
            return nil
        }
    }

    /// True when the still percent-encoded `text` (a path or a query string) decodes to a NUL, or holds one.
    static func encodedTextHasNUL(_ text: some StringProtocol) -> Bool {
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == 0 { return true }
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count, utf8[i + 1] == UInt8(ascii: "0"), utf8[i + 2] == UInt8(ascii: "0") {
                return true
            }
            i += utf8[i] == UInt8(ascii: "%") ? min(3, utf8.count - i) : 1
        }
        return false
    }
}

/// Refuses (400) a request whose path, query string or header values carry a NUL, raw or percent-encoded,
/// before routing, so no handler ever sees one.
struct InputTextMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if InputText.encodedTextHasNUL(request.uri.path) {
            throw APIError.badRequest("the path must not contain a NUL character (U+0000)")
        }
        if let query = request.uri.query, InputText.encodedTextHasNUL(query) {
            throw APIError.badRequest("query values must not contain a NUL character (U+0000)")
        }
        if let field = request.headers.first(where: { $0.value.utf8.contains(0) }) {
            throw APIError.badRequest("the \(field.name.rawName) header must not contain a NUL character (U+0000)")
        }
        return try await next(request, context)
    }
}
