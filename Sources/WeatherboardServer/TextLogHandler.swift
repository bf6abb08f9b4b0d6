import Foundation
import Logging

/// Text lines on stderr (`LOG_FORMAT=text`), in the shape of swift-log's `StreamLogHandler`:
/// `2026-11-25T12:00:00Z info weatherboard : key=value [source] message`.
///
/// Metadata is formatted when a line is written, not when it is set. Hummingbird sets a request id on every
/// request's logger; `StreamLogHandler` formats all metadata again on each set, which cost ~2% of a request
/// at the default level, where nothing is written.
struct TextLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        var line = "\(Date().formatted(.iso8601)) \(event.level) \(label) :"
        if !all.isEmpty {
            line += " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += " [\(event.source)] \(event.message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
