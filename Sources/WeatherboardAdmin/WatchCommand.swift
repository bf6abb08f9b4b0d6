import ArgumentParser
import CurlClient
import Foundation
import WeatherboardAPI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `watch [--json] [--last-event-id ID]`: the moderation queue's events as they happen (CONTRACT §11), until Ctrl-C.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the moderation queue's events as they happen (Ctrl-C stops).",
        discussion: """
            One line an event: REPORT (a report arrived or a post or reply entered the queue: post, or reply and its \
            post, reasons, open reports, excerpt), RESOLVED (a moderator decided: post or reply, action, moderator), \
            RESET (events were missed: reload the queue). With --json each line is {"id", "event", "data"}, data being \
            the event's own JSON (a queue item for report, {postId, replyId (for a reply), action, moderatorId} for \
            resolved). When the connection drops or the server restarts, watch reconnects (after 1, 2, 4, 8, then \
            every 10 seconds) and resumes after the last event it received, so no event is missed or printed twice. \
            Connection news goes to standard error. Ctrl-C (SIGINT) or SIGTERM ends it with exit code 0.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Print each event as one line of JSON: {\"id\", \"event\", \"data\"}.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Resume after this event: the id of the last line an earlier watch printed.", valueName: "ID"))
    var lastEventId: String?

    func validate() throws {
        if let id = lastEventId, id.isEmpty || id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw ValidationError("--last-event-id must be an event id as watch printed it")
        }
    }

    mutating func run() async throws {
        let (options, json, lastEventId) = (options, json, lastEventId)
        try await CommandRunner.run {
            let watch = QueueWatch(client: try AdminSession.client(options), printer: WatchPrinter(json: json), lastEventID: lastEventId ?? "")
            try await Interruption.run { try await watch.run() }
        }
    }
}

/// The watch itself: opens the queue's stream, prints its events, and opens it again whenever it ends.
struct QueueWatch: Sendable {
    static let path = "/v1/moderation/stream"

    let client: AdminClient
    let printer: WatchPrinter
    /// Where to resume the first connection ("" for now on).
    let lastEventID: String

    /// Runs until cancelled, or until the server refuses for good (401, 403, 404, …: the command's one-line error).
    /// A first connection that cannot reach the server is an error as for any command; once connected, a lost
    /// connection, a restarting server (refused connections, 503) and too many streams (429) are waited out.
    func run() async throws {
        var parser = ServerSentEventParser(lastEventID: lastEventID)
        var backoff = ReconnectBackoff()
        var connected = false
        while true {
            var retryAfter: Int? = nil
            let reason: String
            do {
                let response = try await client.openStream(Self.path, lastEventID: parser.lastEventID)
                guard let type = response.header("Content-Type"), type.lowercased().hasPrefix("text/event-stream") else {
                    response.body.cancel()
                    throw AdminError(.server, "unexpected reply from \(client.server)\(Self.path) (HTTP \(response.status)): not an event stream")
                }
                backoff.reset()
                let resuming = parser.lastEventID.isEmpty ? "" : ", resuming after event \(TextLayout.singleLine(parser.lastEventID))"
                let announcement =
                    connected
                    ? "reconnected to \(client.server)\(resuming)"
                    : "watching the moderation queue on \(client.server)\(resuming) (Ctrl-C stops)"
                connected = true
                parser.beginStream()
                var announced = false
                do {
                    for try await chunk in response.body {
                        // Said once the stream's first message arrives (the server sends one at once): from then on
                        // the server has its place in the queue's events, so whatever happens next is printed.
                        if !announced {
                            Console.error(announcement)
                            announced = true
                        }
                        for event in try parser.feed(chunk) { printer.print(event) }
                    }
                    reason = "the server ended the stream"
                } catch let error as CurlError {
                    reason = "connection lost (\(error.message))"
                }
            } catch let error as StreamUnavailable {
                reason = error.message
                retryAfter = error.retryAfterSeconds
            } catch let error as AdminError where error.kind == .unreachable && connected {
                reason = error.message
            } catch let error as ServerSentEventError {
                throw AdminError(.server, "\(error.description) (\(client.server)\(Self.path))")
            }
            let delay = backoff.next(atLeast: retryAfter)
            Console.error("\(reason): reconnecting in \(delay) s")
            try await Task.sleep(for: .seconds(delay))
        }
    }
}

/// Seconds to wait before each attempt to reconnect: 1, 2, 4, 8, then 10 every time; back to 1 once a stream opens.
/// A server's `Retry-After` (up to a minute) is waited out when longer.
struct ReconnectBackoff: Sendable {
    static let maxSeconds = 10
    private var failures = 0

    mutating func next(atLeast retryAfter: Int? = nil) -> Int {
        let delay = min(Self.maxSeconds, 1 << min(failures, 4))
        failures += 1
        guard let retryAfter else { return delay }
        return max(delay, min(retryAfter, 60))
    }

    mutating func reset() { failures = 0 }
}

/// An event as one line: for people, or as JSON `{"id","event","data"}`.
struct WatchPrinter: Sendable {
    let json: Bool

    func print(_ event: ServerSentEvent) {
        Console.out(json ? Self.jsonLine(event) : Self.line(event))
    }

    /// `{"id":"8123-456","event":"report","data":{...}}`: `data` is the event's JSON as the server sent it (line breaks
    /// between its tokens made spaces, so the object stays one line); data that is not JSON becomes a string. `id`
    /// is null before the server named any event.
    static func jsonLine(_ event: ServerSentEvent) -> String {
        let id = event.id.isEmpty ? "null" : jsonString(event.id)
        let data: String
        if (try? JSONSerialization.jsonObject(with: Data(event.data.utf8), options: [.fragmentsAllowed])) != nil {
            // Valid JSON holds no raw line break inside a string: each one is whitespace between tokens.
            data = event.data.replacingOccurrences(of: "\n", with: " ")
        } else {
            data = jsonString(event.data)
        }
        return #"{"id":\#(id),"event":\#(jsonString(event.type)),"data":\#(data)}"#
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    private static func jsonString(_ text: String) -> String {
        guard let bytes = try? encoder.encode(text) else { return "\"\"" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2026-11-22T09:30:00Z  REPORT    post 123  spam×2, abuse  3 open reports  광고 — 싸게 팝니다…`,
    /// `2026-11-22T09:30:40Z  REPORT    reply 456 on post 123  abuse  1 open report  댓글…`,
    /// `2026-11-22T09:31:05Z  RESOLVED  post 123  remove  by moderator 7`, `… RESOLVED  reply 456 on post 123  remove  …`.
    /// A report shows its newest report's time; other events the time they arrived.
    static func line(_ event: ServerSentEvent, now: Date = Date()) -> String {
        let data = Data(event.data.utf8)
        switch event.type {
        case "report":
            // An item of a kind this version does not know is printed as an unknown event.
            if let item = try? AdminClient.decoder.decode(QueueItemResponse.self, from: data), item.subject != nil {
                let time = item.reports.map(\.createdAt).max() ?? item.firstReportedAt
                let status = item.subjectStatus == "visible" ? "" : " [\(clean(item.subjectStatus))]"
                let what = item.reportedReply.map { "reply \(clean($0.id))\(status) on post \(clean(item.post.id))" } ?? "post \(clean(item.post.id))\(status)"
                var parts = ["\(TextLayout.timestamp(time))  \(kind("report"))  \(what)"]
                if !item.reports.isEmpty { parts.append(clean(TextLayout.reasons(item.reports.map(\.reason)))) }
                parts.append(TextLayout.count(item.openReportCount, "open report"))
                parts.append(item.excerpt(columns: 60))
                return parts.joined(separator: "  ")
            }
        case "resolved":
            if let resolved = try? AdminClient.decoder.decode(QueueResolvedEvent.self, from: data) {
                let by = resolved.moderatorId.map { "by moderator \(clean($0))" } ?? "by an operator"
                let what = resolved.replyId.map { "reply \(clean($0)) on post \(clean(resolved.postId))" } ?? "post \(clean(resolved.postId))"
                return "\(TextLayout.timestamp(now))  \(kind("resolved"))  \(what)  \(clean(resolved.action))  \(by)"
            }
        case "reset":
            return "\(TextLayout.timestamp(now))  \(kind("reset"))  events were missed: reload the queue (weatherboard-admin queue)"
        default:
            break
        }
        // An event this version does not know, or data it cannot read: its type and data, cut to one line.
        return "\(TextLayout.timestamp(now))  \(kind(event.type))  \(TextLayout.truncate(clean(event.data), columns: 100))"
    }

    /// The event's type as a column: `REPORT  `, `RESOLVED`.
    private static func kind(_ type: String) -> String {
        TextLayout.pad(TextLayout.truncate(clean(type.uppercased()), columns: 20), columns: 8)
    }

    /// Server text made one printable line (no escape sequence reaches the terminal).
    private static func clean(_ text: String) -> String { TextLayout.singleLine(text) }
}

/// Ends a long-running command cleanly on Ctrl-C (SIGINT) or SIGTERM: the command's task is cancelled (closing its
/// connection) and `run` returns, so the process exits 0.
enum Interruption {
    static func run(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let (arrivals, arrived) = AsyncStream<Int32>.makeStream()
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)  // to the dispatch source instead of ending the process
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { arrived.yield(number) }
            source.resume()
            return source
        }
        defer {
            sources.forEach { $0.cancel() }
            arrived.finish()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask {
                for await _ in arrivals { return }
            }
            // Whichever ends first: a signal (the body, cancelled, ends with an error nobody reads), or the body (its
            // error is thrown here).
            try await group.next()
            group.cancelAll()
        }
    }
}
