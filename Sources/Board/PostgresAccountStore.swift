import Database
import Foundation

/// Accounts, sessions and blocks in PostgreSQL.
public struct PostgresAccountStore: AccountStore {
    let database: PostgresPool
    /// Whose read fence an account's deletion raises (`ReadFence`); nil without standbys.
    let reads: ReplicaRouter?

    public init(database: PostgresPool, reads: ReplicaRouter? = nil) {
        self.database = database
        self.reads = reads
    }

    /// The account columns every query selects, with the ban already checked against the clock.
    static let columns = """
        a.id, a.kind, a.username, a.display_name, a.role, a.created_at, a.write_lsn,
        (a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS banned_now,
        CASE WHEN a.banned AND (a.banned_until IS NULL OR a.banned_until > now()) THEN a.banned_until END AS banned_until_now
        """

    /// An account from `columns`, each name after `prefix` (`SessionGate` reads them as `me_…`).
    static func account(from row: PostgresRow, prefix: String = "") throws -> Account {
        Account(
            id: try row.decode(Int.self, prefix + "id"),
            kind: try UnknownStoredValue.decode(AccountKind.self, row.decode(String.self, prefix + "kind"), column: "accounts.kind"),
            username: try row.decode(String?.self, prefix + "username"),
            displayName: try row.decode(String.self, prefix + "display_name"),
            role: try UnknownStoredValue.decode(Role.self, row.decode(String.self, prefix + "role"), column: "accounts.role"),
            banned: try row.decode(Bool.self, prefix + "banned_now"),
            bannedUntil: try row.decode(Date?.self, prefix + "banned_until_now"),
            createdAt: try row.decode(Date.self, prefix + "created_at"),
            writeLSN: try row.decode(Int64.self, prefix + "write_lsn")
        )
    }

    public func createAnonymous(
        displayName: String, tokenHash: String, tokenPrefix: String, idempotency: IdempotencyKey?, admission: Admission
    ) async throws -> (Account, replayed: Bool) {
        try await database.transaction { connection in
            if let idempotency, case .replay(let accountID, _) = try idempotency.claim(on: connection) {
                // The key hands out a token for its account only while that account is anonymous and exists:
                // after registering (or deleting) it, a replay is a conflict, never a way in.
                let rows = try connection.query(
                    "SELECT \(raw: Self.columns) FROM accounts a WHERE a.id = \(accountID) AND a.kind = 'anonymous' AND a.deleted_at IS NULL FOR UPDATE"
                )
                guard let row = rows.first else { throw BoardError.idempotencyConflict }
                let account = try Self.account(from: row)
                try connection.execute("INSERT INTO sessions (account_id, token_hash, token_prefix) VALUES (\(account.id), \(tokenHash), \(tokenPrefix))")
                return (account, true)
            }
            try admission.admit(on: connection)
            let row = try connection.query(
                """
                INSERT INTO accounts AS a (kind, display_name) VALUES ('anonymous', \(displayName))
                RETURNING \(raw: Self.columns)
                """
            )[0]
            let account = try Self.account(from: row)
            try connection.execute("INSERT INTO sessions (account_id, token_hash, token_prefix) VALUES (\(account.id), \(tokenHash), \(tokenPrefix))")
            try idempotency?.complete(resourceID: account.id, on: connection)
            return (account, false)
        }
    }

    /// Notes that `accountID` has just written: its reads must see the primary's WAL as it is now (sql/0025). Its own
    /// commit is not waited for (`synchronous_commit = off`): a marker lost in a crash is a marker of writes the
    /// new primary may not have either.
    public func recordWrite(accountID: Int) async throws {
        try await database.transaction { connection in
            try connection.execute("SET LOCAL synchronous_commit = off")
            try connection.execute("UPDATE accounts SET write_lsn = (pg_current_wal_lsn() - '0/0')::bigint WHERE id = \(accountID)")
        }
    }

    public func identity(tokenHash: String) async throws -> Identity? {
        try await database.query(SessionGate.session(tokenHash)).first.map(SessionGate.identity(from:))
    }

    public func register(accountID: Int, username: String, passwordHash: String, tokenHash: String, tokenPrefix: String) async throws -> Account {
        do {
            return try await database.transaction { connection in
                let current = try connection.query("SELECT kind FROM accounts WHERE id = \(accountID) FOR UPDATE")
                guard let kind = try current.first?.decode(String.self, "kind") else { throw BoardError.unauthenticated }
                guard kind == AccountKind.anonymous.rawValue else { throw BoardError.alreadyRegistered }
                let row = try connection.query(
                    """
                    UPDATE accounts AS a SET kind = 'registered', username = \(username), password_hash = \(passwordHash), display_name = \(username)
                    WHERE id = \(accountID)
                    RETURNING \(raw: Self.columns)
                    """
                )[0]
                // Every token of the anonymous account stops working; the new one replaces them, and carries their
                // devices (CONTRACT §14).
                try connection.execute("UPDATE sessions SET revoked_at = now() WHERE account_id = \(accountID) AND revoked_at IS NULL")
                let session = try connection.query(
                    "INSERT INTO sessions (account_id, token_hash, token_prefix) VALUES (\(accountID), \(tokenHash), \(tokenPrefix)) RETURNING id"
                )[0].decode(Int.self, "id")
                try connection.execute("UPDATE devices SET session_id = \(session) WHERE account_id = \(accountID)")
                return try Self.account(from: row)
            }
        } catch let error as PostgresError where error.isUniqueViolation && error.constraint == "accounts_username_key" {
            throw BoardError.usernameTaken
        }
    }

    public func usernameExists(_ username: String) async throws -> Bool {
        try await !database.query("SELECT 1 AS one FROM accounts WHERE username = \(username)").isEmpty
    }

    public func credentials(username: String) async throws -> (Account, passwordHash: String)? {
        let rows = try await database.query(
            "SELECT \(raw: Self.columns), a.password_hash FROM accounts a WHERE a.username = \(username) AND a.kind = 'registered' AND a.deleted_at IS NULL"
        )
        guard let row = rows.first, let hash = try row.decode(String?.self, "password_hash") else { return nil }
        return (try Self.account(from: row), hash)
    }

    public func addSession(accountID: Int, tokenHash: String, tokenPrefix: String) async throws {
        try await database.execute("INSERT INTO sessions (account_id, token_hash, token_prefix) VALUES (\(accountID), \(tokenHash), \(tokenPrefix))")
    }

    public func updatePasswordHash(accountID: Int, passwordHash: String) async throws {
        try await database.execute("UPDATE accounts SET password_hash = \(passwordHash) WHERE id = \(accountID)")
    }

    /// Revokes the caller's session and removes the devices it registered (CONTRACT §14), in a transaction whose first
    /// statement checks it (`Caller`, holding it for update).
    public func revokeSession(by caller: Caller) async throws {
        try await database.transaction { connection in
            let id = try caller.identity(on: connection, lock: .exclusive).sessionID
            try connection.execute("UPDATE sessions SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL")
            try connection.execute("DELETE FROM devices WHERE session_id = \(id)")
        }
    }

    public func account(id: Int) async throws -> Account? {
        let rows = try await database.query("SELECT \(raw: Self.columns) FROM accounts a WHERE a.id = \(id) AND a.deleted_at IS NULL")
        return try rows.first.map { try Self.account(from: $0) }
    }

    /// Deletes the caller's account, in a transaction whose first statement checks the caller (`Caller`, holding its
    /// session and account for update).
    public func delete(by caller: Caller) async throws {
        try await database.fencedTransaction(reads) { connection, fence in
            let accountID = try caller.identity(on: connection, lock: .exclusive).accountID
            let locked = try connection.query("SELECT id FROM accounts WHERE id = \(accountID) AND deleted_at IS NULL FOR UPDATE")
            guard !locked.isEmpty else { return }
            fence.fence()
            // Its live posts too: a report on one (which locks the post) either commits before this goes on, and
            // the statements below (each with a fresh snapshot) see it and keep the post as evidence, or waits
            // and then finds the post deleted. Without this lock a report committed meanwhile was cascaded away.
            _ = try connection.execute("SELECT 1 FROM posts WHERE author_id = \(accountID) AND deleted_at IS NULL FOR UPDATE")
            // And its live replies, for the same reason (a report on a reply locks the reply).
            _ = try connection.execute("SELECT 1 FROM replies WHERE author_id = \(accountID) AND deleted_at IS NULL FOR UPDATE")
            // Media first, only marked: all of it retired (the sync makes its files private, the purger deletes
            // what no report names), and off the posts that may go. Then those posts can go.
            try MediaRecords.retireForDeletedAccount(accountID, on: connection)
            for statement in Self.deletionStatements(accountID: accountID) {
                try connection.execute(statement)
            }
        }
    }

    /// Account deletion, in order. Each walks an index on the account's (or its posts') id, so deleting
    /// stays fast however large the tables grow (sql/0015; `HostileClientTests.deletionPlans` checks).
    public static func deletionStatements(accountID: Int) -> [SQLQuery] {
        [
            // Its phones never hear from the board again (CONTRACT §14), and its settings go with them.
            "DELETE FROM devices WHERE account_id = \(accountID)",
            "DELETE FROM notification_settings WHERE account_id = \(accountID)",
            "DELETE FROM sessions WHERE account_id = \(accountID)",
            "DELETE FROM blocks WHERE blocker_id = \(accountID)",
            "DELETE FROM blocks WHERE blocked_id = \(accountID)",
            // Posts nobody reported go, with their revisions. Reported ones stay as evidence for their
            // reports: deleted, without text; the reports keep their own snapshots.
            "DELETE FROM posts p WHERE p.author_id = \(accountID) AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.post_id = p.id)",
            "DELETE FROM post_revisions v USING posts p WHERE p.author_id = \(accountID) AND v.post_id = p.id",
            // Evidence posts are found by their reports' snapshots, never by search.
            "DELETE FROM post_search s USING posts p WHERE p.author_id = \(accountID) AND s.post_id = p.id",
            """
            UPDATE posts SET title = NULL, body = '', deleted_at = COALESCE(deleted_at, now()), deleted_by = COALESCE(deleted_by, author_id)
            WHERE author_id = \(accountID)
            """,
            // Its replies as its posts (CONTRACT §13): unreported ones go with their revisions, reported ones stay
            // as evidence, deleted and without text.
            "DELETE FROM replies r WHERE r.author_id = \(accountID) AND NOT EXISTS (SELECT 1 FROM reports rp WHERE rp.reply_id = r.id)",
            "DELETE FROM reply_revisions v USING replies r WHERE r.author_id = \(accountID) AND v.reply_id = r.id",
            """
            UPDATE replies SET body = '', deleted_at = COALESCE(deleted_at, now()), deleted_by = COALESCE(deleted_by, author_id)
            WHERE author_id = \(accountID)
            """,
            // Its idempotency keys can replay nothing any more.
            "DELETE FROM idempotency_keys WHERE scope = \("post:\(accountID)")",
            "DELETE FROM idempotency_keys WHERE scope = \("reply:\(accountID)")",
            // The row stays as an id (reports, the log and evidence posts point at it): no name, no password.
            """
            UPDATE accounts SET username = NULL, password_hash = NULL, display_name = \(Self.deletedDisplayName),
                ban_reason = NULL, deleted_at = now()
            WHERE id = \(accountID)
            """,
        ]
    }

    /// What moderators see as the author of a deleted account's evidence posts.
    static let deletedDisplayName = "(deleted account)"

    /// Adds the caller's block of `blocked` (repeatable), in one transaction that checks the caller first (`Caller`);
    /// `invalidField` for the caller itself, `notFound` for no such account.
    public func block(by caller: Caller, blocked: Int) async throws {
        do {
            try await database.transaction { connection in
                let blocker = try caller.identity(on: connection).accountID
                guard blocked != blocker else { throw BoardError.invalidField(field: "accountId", message: "you cannot block yourself") }
                try connection.execute("INSERT INTO blocks (blocker_id, blocked_id) VALUES (\(blocker), \(blocked)) ON CONFLICT DO NOTHING")
            }
        } catch let error as PostgresError where error.isForeignKeyViolation {
            throw BoardError.notFound("account")
        }
    }

    /// Takes the caller's block of `blocked` off (repeatable), as `block`; `notFound` for no such account.
    public func unblock(by caller: Caller, blocked: Int) async throws {
        try await database.transaction { connection in
            let blocker = try caller.identity(on: connection).accountID
            guard try !connection.query("SELECT 1 FROM accounts WHERE id = \(blocked) AND deleted_at IS NULL").isEmpty else { throw BoardError.notFound("account") }
            try connection.execute("DELETE FROM blocks WHERE blocker_id = \(blocker) AND blocked_id = \(blocked)")
        }
    }
}
