import Database

/// A read with its session check inside (`SessionGate`): the session and its account are one `MATERIALIZED` row `me`,
/// and the read a LATERAL subquery on it, so no session means no read at all (a nested loop with no outer row never
/// starts its inner side: `SessionGateTests`); a session with nothing to read means one row of `me` alone, and
/// otherwise the read's rows, each with `me`'s columns after its own.
extension SessionGate {
    /// `me`'s columns: a session's account as `PostgresAccountStore.columns`, each named `me_…`.
    static let columns = """
        s.id AS me_session_id, a.id AS me_id, a.kind AS me_kind, a.username AS me_username, a.display_name AS me_display_name,
        a.role AS me_role, a.created_at AS me_created_at, a.write_lsn AS me_write_lsn,
        (a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS me_banned_now,
        CASE WHEN a.banned AND (a.banned_until IS NULL OR a.banned_until > now()) THEN a.banned_until END AS me_banned_until_now
        """

    /// `query` behind the session of `tokenHash`: its rows (each with `gate_row` true and `me`'s columns after), one
    /// row of `me` alone when it has none, and no row when the session is unknown or revoked. `query` reads the
    /// session's account as `SessionGate.account`.
    static func gated(_ query: SQLQuery, tokenHash: String) -> SQLQuery {
        var sql: SQLQuery = "WITH me AS MATERIALIZED (\(session(tokenHash))) SELECT q.*, me.* FROM me LEFT JOIN LATERAL (SELECT q0.*, true AS gate_row FROM ("
        sql.append(query)
        sql.append(") q0 OFFSET 0) q ON true")
        return sql
    }

    /// The live session of `tokenHash` and its account, as `columns`: the one session check, alone
    /// (`PostgresAccountStore.identity`) or as a gated read's `me`.
    static func session(_ tokenHash: String) -> SQLQuery {
        "SELECT \(raw: columns) FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = \(tokenHash) AND s.revoked_at IS NULL"
    }

    /// The live session `id` and its account, as `columns` (`Caller`: a caller checked before, checked again inside a
    /// write).
    static func session(id: Int) -> SQLQuery {
        "SELECT \(raw: columns) FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.id = \(id) AND s.revoked_at IS NULL"
    }

    /// `session` with its rows locked as `lock` says, until the transaction ends. Under READ COMMITTED a statement
    /// that waits on a lock reads the row again as committed, and checks it again: a revocation it waited for leaves it
    /// no row, a ban it waited for shows.
    static func locked(_ session: SQLQuery, _ lock: Caller.Lock) -> SQLQuery {
        var sql = session
        switch lock {
        case .share: sql.append(" FOR SHARE OF s, a")
        case .updatingAccount: sql.append(" FOR SHARE OF s FOR NO KEY UPDATE OF a")
        case .session: sql.append(" FOR SHARE OF s")
        case .exclusive: sql.append(" FOR UPDATE OF s, a")
        }
        return sql
    }

    /// The caller, checked by the first statement of a write's transaction on `connection` (`Caller`), which holds the
    /// session's and the account's rows as `lock` says; `unauthenticated` for a token with no live session. A gate a
    /// statement of its own has settled is checked again all the same, by its session's id, for the lock and for what
    /// changed since.
    func check(on connection: PostgresConnection, lock: Caller.Lock) throws -> Identity {
        switch settled {
        case .refused?: throw BoardError.unauthenticated
        case .identity(let identity)?:
            guard let row = try connection.query(Self.locked(Self.session(id: identity.sessionID), lock)).first else {
                // Revoked since the earlier check: refused all the same.
                counts.add(.refused)
                throw BoardError.unauthenticated
            }
            return try Self.identity(from: row)
        case nil:
            counts.add(.inWrite)
            return try settle(connection.query(Self.locked(Self.session(tokenHash), lock)).first.map(Self.identity(from:)))
        }
    }

    /// The caller from a row holding `columns`.
    static func identity(from row: PostgresRow) throws -> Identity {
        Identity(account: try PostgresAccountStore.account(from: row, prefix: "me_"), sessionID: try row.decode(Int.self, "me_session_id"))
    }

    /// Settles the gate on a gated statement's rows, and answers the reader it found and the read's own rows.
    func settle(_ rows: PostgresRows) throws -> (viewer: Viewer, rows: [PostgresRow]) {
        counts.add(.inRead)
        let identity = try settle(rows.first.map(Self.identity(from:)))
        guard let gateColumn = rows.columns.names.firstIndex(of: "gate_row") else {
            throw PostgresError(kind: .decoding, message: "a gated read has no gate_row column")
        }
        return (Viewer(identity), try rows.filter { try $0.decode(Bool?.self, at: gateColumn) == true })
    }

    /// The rows of the statement `build` writes for `viewer`, on the primary pool `database`, and the reader they were
    /// read for. A viewer whose token is still to be checked has it checked in the same statement (`gated`); when
    /// that finds staff, whose view is another statement, the read runs again for them.
    static func read(
        _ database: PostgresPool, for viewer: Viewer, _ build: (Viewer) -> SQLQuery
    ) async throws -> (rows: [PostgresRow], viewer: Viewer) {
        guard let gate = viewer.pendingGate else { return (Array(try await database.query(build(viewer))), viewer) }
        let (settled, rows) = try gate.settle(await database.query(gated(build(viewer), tokenHash: gate.tokenHash)))
        guard !settled.isModerator else { return (Array(try await database.query(build(settled))), settled) }
        return (rows, settled)
    }

    /// `read` on one connection, inside a job of its own.
    static func read(
        on connection: PostgresConnection, for viewer: Viewer, _ build: (Viewer) -> SQLQuery
    ) throws -> (rows: [PostgresRow], viewer: Viewer) {
        guard let gate = viewer.pendingGate else { return (Array(try connection.query(build(viewer))), viewer) }
        let (settled, rows) = try gate.settle(connection.query(gated(build(viewer), tokenHash: gate.tokenHash)))
        guard !settled.isModerator else { return (Array(try connection.query(build(settled))), settled) }
        return (rows, settled)
    }

    /// `viewer` with its token checked by a statement of its own: for a read a standby serves (CONTRACT §12), as a
    /// standby's copy of the sessions may lag a revocation, and the read's standby depends on the reader's last write.
    static func checked(_ viewer: Viewer) async throws -> Viewer {
        guard let gate = viewer.pendingGate else { return viewer }
        return Viewer(try await gate.resolve())
    }
}
