/// One event of a `text/event-stream` (CONTRACT §11), as the WHATWG HTML standard's EventSource dispatches it.
struct ServerSentEvent: Equatable, Sendable {
    /// The stream's last event id when the event was dispatched ("" before the server ever sent one).
    var id: String
    /// The `event:` field, `message` when there was none.
    var type: String
    /// The `data:` lines joined with `\n`.
    var data: String
}

/// A failure of the stream itself, not of the connection.
struct ServerSentEventError: Error, CustomStringConvertible, Sendable {
    var description: String
}

/// Turns a `text/event-stream` body, in chunks as they arrive, into events, by the rules of the WHATWG HTML standard
/// (§9.2.6, "Interpreting an event stream"):
///
/// - lines end with `\r\n`, `\n` or `\r` (a `\r\n` split between two chunks is one line end); a leading byte order
///   mark is dropped; bytes are UTF-8, invalid sequences read as U+FFFD;
/// - a line starting with `:` is a comment; otherwise `field: value` (one space after the colon dropped), or a line
///   without a colon is a field with an empty value; unknown fields are ignored;
/// - `data` lines are joined with `\n`; `event` sets the type; `id` sets the last event id (unless it holds U+0000);
///   `retry` (ASCII digits only) sets the reconnection time;
/// - a blank line dispatches: the last event id takes the id buffer's value, then, if some `data` came, an event is
///   produced. An `id`-only message (no `data`) so moves the last event id and produces no event;
/// - an event cut off by the end of the stream is not dispatched.
///
/// One parser serves every connection of a watch: `beginStream()` before each, so the id it resumes from survives.
/// As browsers do, the id buffer of a new connection starts at the last event id (not ""), so an event without an
/// `id:` line, or a first message with only `retry:`, never makes a reconnection forget where it was.
struct ServerSentEventParser: Sendable {
    /// The `Last-Event-ID` to resume from; "" for none.
    private(set) var lastEventID: String
    /// The reconnection time the server asked for with `retry:`, in milliseconds.
    private(set) var retryMilliseconds: Int?

    /// The longest line, and the most `data` one event may gather: past them the stream is refused (a queue item with
    /// every report's snapshot is far smaller; this only stops a broken server from filling memory).
    let maxLineBytes: Int
    let maxDataBytes: Int

    private var line: [UInt8] = []
    private var afterCR = false
    private var atStreamStart = true
    private var data = ""
    private var dataLines = 0
    private var eventType = ""
    private var idBuffer: String

    init(lastEventID: String = "", maxLineBytes: Int = 16 << 20, maxDataBytes: Int = 16 << 20) {
        self.lastEventID = lastEventID
        self.idBuffer = lastEventID
        self.maxLineBytes = maxLineBytes
        self.maxDataBytes = maxDataBytes
    }

    /// Starts a new connection's stream: what was half-read of the last one is dropped, the last event id stays.
    mutating func beginStream() {
        line.removeAll(keepingCapacity: true)
        afterCR = false
        atStreamStart = true
        data = ""
        dataLines = 0
        eventType = ""
        idBuffer = lastEventID
    }

    /// Reads a chunk of the body; returns the events it completed, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }  // the \n of a \r\n
            }
            switch byte {
            case UInt8(ascii: "\r"):
                afterCR = true
                try endLine(into: &events)
            case UInt8(ascii: "\n"):
                try endLine(into: &events)
            default:
                guard line.count < maxLineBytes else {
                    throw ServerSentEventError(description: "the server sent a line longer than \(maxLineBytes) bytes")
                }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) throws {
        var text = String(decoding: line, as: UTF8.self)
        line.removeAll(keepingCapacity: true)
        if atStreamStart {
            atStreamStart = false
            if text.unicodeScalars.first == "\u{FEFF}" { text.unicodeScalars.removeFirst() }
        }
        if text.isEmpty {
            if let event = dispatch() { events.append(event) }
            return
        }
        if text.hasPrefix(":") { return }  // a comment (the heartbeat)
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event":
            eventType = String(value)
        case "data":
            guard data.utf8.count + value.utf8.count < maxDataBytes else {
                throw ServerSentEventError(description: "the server sent an event with more than \(maxDataBytes) bytes of data")
            }
            if dataLines > 0 { data += "\n" }
            data += value
            dataLines += 1
        case "id":
            if !value.unicodeScalars.contains("\u{0}") { idBuffer = String(value) }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                retryMilliseconds = Int(value) ?? Int.max  // more digits than an Int holds: as long as can be
            }
        default:
            break
        }
    }

    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = idBuffer
        defer {
            data = ""
            dataLines = 0
            eventType = ""
        }
        guard dataLines > 0 else { return nil }
        return ServerSentEvent(id: lastEventID, type: eventType.isEmpty ? "message" : eventType, data: data)
    }
}
