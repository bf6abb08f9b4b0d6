import Foundation

/// Online migrations: `CREATE INDEX CONCURRENTLY` cannot run in a transaction (nor in a multi-statement query
/// string), and builds an index without blocking writes; a plain `CREATE INDEX` on `posts` holds every write of the
/// board for as long as the build takes (minutes at 10M posts). A file marked `-- migrate: online` is applied one
/// statement at a time and recorded once every statement has succeeded. A run cut short (a crash, a cancelled
/// build) leaves an INVALID index behind, which `IF NOT EXISTS` would then skip for ever: each index such a file
/// creates is dropped first when it exists but is invalid, so running the migration again finishes it.
extension Migrator.Migration {
    static let onlineMarker = "-- migrate: online"

    var isOnline: Bool { sql.hasPrefix(Self.onlineMarker) }

    /// The file's statements: the text between semicolons that end a line, comments and blank lines dropped. An
    /// online file holds plain statements only (no `$$` bodies, no semicolon inside a statement's line).
    func onlineStatements() throws -> [String] {
        guard !sql.contains("$$") else {
            throw PostgresError(kind: .decoding, message: "online migration \(name) must not contain $$ bodies")
        }
        var statements: [String] = []
        var current = ""
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("--") { continue }
            current += (current.isEmpty ? "" : "\n") + line
            if text.hasSuffix(";") {
                statements.append(current)
                current = ""
            }
        }
        guard current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw PostgresError(kind: .decoding, message: "online migration \(name) ends inside a statement (a missing ';')")
        }
        return statements
    }

    /// The name of the index a `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS <name>` statement builds.
    static func concurrentIndexName(_ statement: String) -> String? {
        let words = statement.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map { $0.lowercased() }
        guard let at = words.firstIndex(of: "exists"), at >= 5, words[..<at].contains("concurrently"), words[..<at].contains("index"),
              at + 1 < words.count
        else { return nil }
        let name = words[at + 1]
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } ? name : nil
    }
}

extension Migrator {
    static func applyOnline(_ migration: Migration, on connection: PostgresConnection) throws {
        for statement in try migration.onlineStatements() {
            if let index = Migration.concurrentIndexName(statement) {
                let invalid = try connection.query(
                    """
                    SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                    WHERE c.relname = \(index) AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid
                    """
                )
                // The name is the file's own, checked to be a plain identifier: no outside text reaches this statement.
                if !invalid.isEmpty { try connection.simpleQuery("DROP INDEX CONCURRENTLY IF EXISTS \(index)") }
            }
            try connection.simpleQuery(statement)
        }
    }
}
