/// The `<Error><Code>…</Code><Message>…</Message></Error>` body of a failed S3 request.
///
/// Not an XML parser: it looks for the first `<Code>` and `<Message>` elements of an `<Error>` document, keeps at
/// most a few hundred bytes of each and only printable ASCII, so any body (binary, huge, truncated) is safe.
struct S3ErrorBody: Equatable {
    var code: String?
    var message: String?

    /// `nil` unless `body` holds an `<Error>` element.
    init?(_ body: [UInt8]) {
        guard Self.find(Array("<Error>".utf8), in: body[...]) != nil else { return nil }
        code = Self.element("Code", in: body, maxLength: 64)
        message = Self.element("Message", in: body, maxLength: 300)
    }

    static func element(_ name: String, in body: [UInt8], maxLength: Int) -> String? {
        let open = Array("<\(name)>".utf8)
        let close = Array("</\(name)>".utf8)
        guard let start = find(open, in: body[...]) else { return nil }
        let contentStart = start + open.count
        guard let end = find(close, in: body[contentStart...]) else { return nil }
        let content = body[contentStart..<min(end, contentStart + maxLength)]
        let printable = content.map { (0x20...0x7e).contains($0) ? $0 : UInt8(ascii: "?") }
        let text = String(decoding: printable, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// The index of the first occurrence of `needle` in `haystack`.
    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
