import CLibPQ
import Foundation

/// One libpq connection, used synchronously.
///
/// Thread rule: a connection belongs to exactly one `PostgresPool` worker thread. The pool hands it to a
/// closure on that thread and takes it back when the closure returns; the closure must not let it escape.
/// That is why this type is not `Sendable`: the compiler keeps it from crossing tasks.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    /// Prepared statements by SQL text. Each distinct SQL is prepared once per connection.
    private var statements: [String: PreparedStatement] = [:]
    /// Lets the pool's cancel thread cancel the statement this connection is running (see `Job.cancel`).
    private(set) var cancelHandle: PostgresCancelHandle?
    /// The pool's closure job running on this connection, whose cancellation fails the statements it starts.
    var runningJob: Job?
    /// The pool's count of statements run, if the connection belongs to a pool.
    var statementCounter: StatementCounter?

    /// A statement prepared on this connection, and the columns of its results once one has arrived
    /// (they never change for a prepared statement, so later results reuse them).
    private final class PreparedStatement {
        let name: String
        var columns: PostgresColumns?

        init(name: String) { self.name = name }
    }

    /// Connects with a libpq URI or conninfo string; empty means "use the `PG*` environment variables".
    public init(conninfo: String, statementTimeoutMilliseconds: Int, connectTimeoutSeconds: Int = 3, applicationName: String = "weatherboard") throws {
        // Keywords before `dbname` are defaults: an expanded URI/conninfo in `dbname` overrides them.
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = [String(connectTimeoutSeconds), applicationName, conninfo]
        let conn: OpaquePointer? = keywords.withCStrings { kw in
            values.withCStrings { vals in
                PQconnectdbParams(kw, vals, 1)
            }
        }
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let message = conn.map { Self.errorMessage($0) } ?? "out of memory"
            if let conn { PQfinish(conn) }
            throw PostgresError(kind: .connection, message: "cannot connect to PostgreSQL: \(message)")
        }
        self.handle = conn
        self.cancelHandle = PostgresCancelHandle(connection: conn)
        // Server notices go nowhere instead of libpq's default, stderr.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        let timeout = max(0, statementTimeoutMilliseconds)
        // Session settings every query relies on: UTC ISO timestamps and the statement timeout.
        // Generic plans: every statement is prepared once and written so its generic plan is index-driven
        // (see PostgresPostStore.order); with `auto`, a `LIMIT $n` made PostgreSQL re-plan every execution,
        // which cost three times the execution itself.
        // No JIT: every statement here reads a handful of rows through an index, and LLVM compilation costs
        // ~170 ms where the query takes 0.2 ms. Plans stay below `jit_above_cost` anyway (`SQLQuery.page`,
        // `ScalePlanTests`); this keeps a statement whose estimate grows with a table from ever paying for it.
        try simpleQuery(
            "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET statement_timeout = \(timeout); SET lock_timeout = \(timeout); SET plan_cache_mode = force_generic_plan; SET jit = off"
        )
    }

    deinit {
        close()
    }

    public func close() {
        // A cancel request on its way keeps its own reference; one sent after this finds no backend to cancel.
        cancelHandle = nil
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
        statements.removeAll()
    }

    /// True while libpq considers the connection usable.
    public var isOpen: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// True while the session is idle outside any transaction (the only state a pooled connection may be in).
    var isIdle: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Detects a connection the server has closed while it sat idle (a restart, `pg_terminate_backend`),
    /// without a round trip: an idle connection has nothing to read unless the server hung up.
    func probeIdle() -> Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        let fd = PQsocket(handle)
        guard fd >= 0 else { return false }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        // A pooled session never LISTENs (the listener has a connection of its own), so an idle one has nothing to
        // read unless the server is closing it (a FATAL message, then EOF). Anything readable means: replace it.
        return poll(&pfd, 1, 0) == 0
    }

    // MARK: Notifications

    /// Waits up to `timeoutMilliseconds` for the server to send something, then reads it (`PQconsumeInput`) and
    /// returns how many notifications (`NOTIFY`, for a channel this session `LISTEN`s on) arrived; 0 on a timeout.
    /// Throws when the connection is gone (the server closed it, `pg_terminate_backend`).
    public func waitForNotifications(timeoutMilliseconds: Int32) throws -> Int {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { throw PostgresError(kind: .connection, message: "connection closed") }
        var count = drainNotifications(handle)
        if count > 0 { return count }
        let fd = PQsocket(handle)
        guard fd >= 0 else { throw PostgresError(kind: .connection, message: "connection has no socket") }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, timeoutMilliseconds)
        if ready < 0 && errno != EINTR { throw PostgresError(kind: .connection, message: "poll failed: errno \(errno)") }
        guard ready > 0 else { return 0 }
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(kind: .connection, message: "connection lost: \(Self.errorMessage(handle))")
        }
        count = drainNotifications(handle)
        return count
    }

    private func drainNotifications(_ handle: OpaquePointer) -> Int {
        var count = 0
        while let notification = PQnotifies(handle) {
            PQfreemem(notification)
            count += 1
        }
        return count
    }

    // MARK: Queries

    /// Runs a parameterized statement (prepared once per connection) and returns its rows.
    @discardableResult
    public func query(_ query: SQLQuery) throws -> PostgresRows {
        try checkCancelled()
        return try run(query)
    }

    /// Runs a statement that undoes session state a job set (`pg_advisory_unlock`, a setting), even when the
    /// job has been cancelled: unlike `query`, it cannot be skipped. When it fails the connection is closed,
    /// because ending the session is the one undo that cannot fail (the pool replaces the connection), so
    /// the state never stays on a pooled connection.
    public func restoreSession(_ query: SQLQuery) {
        guard handle != nil else { return }
        do {
            _ = try run(query)
        } catch {
            close()
        }
    }

    private func run(_ query: SQLQuery) throws -> PostgresRows {
        guard let handle else { throw PostgresError(kind: .connection, message: "connection is closed") }
        let statement = try prepared(query, handle: handle)
        let binds = query.binds
        let result: OpaquePointer? = statement.name.withCString { cName in
            withBindValues(binds) { values in
                PQexecPrepared(handle, cName, Int32(binds.count), values, nil, nil, 0)
            }
        }
        return try consume(result, handle: handle, sql: query.sql, statement: statement)
    }

    /// Runs independent statements as one libpq pipeline and reports each outcome through `completion`
    /// (with the statement's index) as soon as its result arrives.
    ///
    /// Every statement is sent before the first result is read, and each is followed by its own Sync, so
    /// each runs in its own implicit transaction exactly as `query` would run it: an error or a timeout in
    /// one leaves the others untouched, and a write is committed before its result is reported. What it
    /// saves is the round trip per statement: PostgreSQL reads the batch with one wake-up instead of one
    /// per statement (bench/README.md measures it). The pool only batches statements that were already
    /// queued behind busy connections, at most `PostgresConfiguration.pipelineDepth` of them; their
    /// requests and results are small, so neither side's socket buffer can fill while the other writes.
    func pipeline(_ queries: [SQLQuery], completion: (Int, Result<PostgresRows, any Error>) -> Void) {
        guard let handle else {
            for index in queries.indices { completion(index, .failure(Self.closedError)) }
            return
        }
        // Statements this connection has not seen yet are prepared first, outside the pipeline.
        var names: [Int: PreparedStatement] = [:]
        for (index, query) in queries.enumerated() {
            do {
                names[index] = try prepared(query, handle: handle)
            } catch {
                completion(index, .failure(error))
            }
        }
        let pending = queries.indices.filter { names[$0] != nil }
        guard pending.count > 1, PQenterPipelineMode(handle) == 1 else {
            for index in pending { completion(index, Result { try query(queries[index]) }) }
            return
        }
        var sent: [Int] = []
        for index in pending {
            let binds = queries[index].binds
            let queued: Int32 = names[index]!.name.withCString { cName in
                withBindValues(binds) { values in
                    PQsendQueryPrepared(handle, cName, Int32(binds.count), values, nil, nil, 0)
                }
            }
            guard queued == 1 else { break }
            sent.append(index)
            guard PQpipelineSync(handle) == 1 else { break }
        }
        var inStep = true
        for index in sent {
            completion(index, readPipelined(handle: handle, sql: queries[index].sql, statement: names[index]!, inStep: &inStep))
        }
        for index in pending.dropFirst(sent.count) {
            completion(index, .failure(PostgresError(kind: .connection, message: Self.errorMessage(handle))))
        }
        if !inStep || sent.count < pending.count || PQexitPipelineMode(handle) != 1 {
            // The session's protocol state is unknown: the worker replaces the connection.
            close()
        }
    }

    /// Reads one pipelined statement's result and the Sync after it. `inStep` turns false (and stays
    /// false) when what libpq returns does not follow that shape, which only a broken connection does.
    private func readPipelined(handle: OpaquePointer, sql: String, statement: PreparedStatement, inStep: inout Bool) -> Result<PostgresRows, any Error> {
        guard inStep, PQstatus(handle) == CONNECTION_OK else {
            inStep = false
            return .failure(PostgresError(kind: .connection, message: Self.errorMessage(handle)))
        }
        var outcome: Result<PostgresRows, any Error>?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                PQclear(result)
                inStep = false
                break
            }
            if outcome == nil {
                outcome = Result { try consume(result, handle: handle, sql: sql, statement: statement) }
            } else {
                PQclear(result)
            }
        }
        if inStep {
            if let sync = PQgetResult(handle) {
                if PQresultStatus(sync) != PGRES_PIPELINE_SYNC { inStep = false }
                PQclear(sync)
            } else {
                inStep = false
            }
        }
        return outcome ?? .failure(PostgresError(kind: .connection, message: Self.errorMessage(handle)))
    }

    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    public func execute(_ query: SQLQuery) throws -> Int {
        try self.query(query).affectedRows
    }

    /// Runs `body` in a READ COMMITTED transaction: COMMIT when it returns, ROLLBACK when it throws (a ROLLBACK
    /// that fails leaves the session in its transaction, and the pool then closes the connection).
    @discardableResult
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try simpleQuery("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            if isOpen { try? simpleQuery("ROLLBACK") }
            throw error
        }
        try simpleQuery("COMMIT")
        return value
    }

    /// Runs fixed SQL text without parameters, possibly several statements (migrations, BEGIN/COMMIT).
    /// Never pass input here: use `query(_:)`.
    public func simpleQuery(_ sql: String) throws {
        guard let handle else { throw PostgresError(kind: .connection, message: "connection is closed") }
        try checkCancelled()
        let result = PQexec(handle, sql)
        _ = try consume(result, handle: handle, sql: sql)
    }

    /// Runs `COPY … FROM STDIN` (fixed SQL text chosen by code, never input) and streams `data` to the
    /// server in chunks. Returns the number of rows copied.
    @discardableResult
    public func copyIn(_ sql: String, data: [UInt8], chunkSize: Int = 64 * 1024) throws -> Int {
        guard let handle else { throw PostgresError(kind: .connection, message: "connection is closed") }
        try checkCancelled()
        guard let start = PQexec(handle, sql) else {
            throw PostgresError(kind: PQstatus(handle) == CONNECTION_OK ? .server : .connection, message: Self.errorMessage(handle))
        }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try consume(start, handle: handle, sql: sql)
            throw PostgresError(kind: .server, message: "COPY did not start: \(sql.prefix(60))")
        }
        PQclear(start)
        var failure: String?
        data.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let length = min(chunkSize, buffer.count - offset)
                let sent = buffer.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: length) {
                    PQputCopyData(handle, $0, Int32(length))
                }
                if sent != 1 {
                    failure = Self.errorMessage(handle)
                    break
                }
                offset += length
            }
        }
        // Ending with an error message makes the server abort the COPY; either way we read its verdict below.
        let ended = failure.map { PQputCopyEnd(handle, $0) } ?? PQputCopyEnd(handle, nil)
        if ended != 1 && failure == nil { failure = Self.errorMessage(handle) }
        var rows = 0
        var firstError: (any Error)?
        while let result = PQgetResult(handle) {
            do {
                rows = try consume(result, handle: handle, sql: sql).affectedRows
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
        if let failure { throw PostgresError(kind: .connection, message: "COPY failed: \(failure)") }
        return rows
    }

    // MARK: Internals

    /// In a pool closure whose task has been cancelled, statements fail at once instead of running.
    private func checkCancelled() throws {
        if let runningJob, runningJob.isCancelled { throw CancellationError() }
    }

    private func prepared(_ query: SQLQuery, handle: OpaquePointer) throws -> PreparedStatement {
        statementCounter?.add()
        // Every statement passes here before its parameters go to libpq as C strings.
        try PostgresBind.requireCStrings(query.binds)
        if let statement = statements[query.sql] { return statement }
        let name = "wb\(statements.count + 1)"
        let types = query.binds.map { Oid($0.type) }
        let result = types.withUnsafeBufferPointer { typePointer in
            PQprepare(handle, name, query.sql, Int32(types.count), typePointer.baseAddress)
        }
        _ = try consume(result, handle: handle, sql: query.sql)
        let statement = PreparedStatement(name: name)
        statements[query.sql] = statement
        return statement
    }

    private func consume(_ result: OpaquePointer?, handle: OpaquePointer, sql: String, statement: PreparedStatement? = nil) throws -> PostgresRows {
        guard let result else {
            throw PostgresError(kind: PQstatus(handle) == CONNECTION_OK ? .server : .connection, message: Self.errorMessage(handle))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            break
        default:
            let state = Self.field(result, DiagField.sqlState)
            var message = Self.field(result, DiagField.messagePrimary) ?? Self.errorMessage(handle)
            if message.isEmpty { message = Self.errorMessage(handle) }
            let broken = PQstatus(handle) != CONNECTION_OK
            throw PostgresError(
                kind: broken && state == nil ? .connection : .server,
                message: message,
                sqlState: state ?? (broken ? "08006" : nil),
                constraint: Self.field(result, DiagField.constraintName),
                detail: Self.field(result, DiagField.detail)
            )
        }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        let columns: PostgresColumns
        if let cached = statement?.columns, cached.count == columnCount {
            columns = cached
        } else {
            var names: [String] = []
            var types: [UInt32] = []
            names.reserveCapacity(columnCount)
            types.reserveCapacity(columnCount)
            for c in 0..<columnCount {
                names.append(String(cString: PQfname(result, Int32(c))))
                types.append(UInt32(PQftype(result, Int32(c))))
            }
            columns = PostgresColumns(names: names, types: types)
            statement?.columns = columns
        }
        var storage = PostgresCells()
        storage.cells.reserveCapacity(rowCount * columnCount)
        var total = 0
        for r in 0..<Int32(rowCount) {
            for c in 0..<Int32(columnCount) { total += Int(PQgetlength(result, r, c)) }
        }
        // Cells address the buffer with 32-bit offsets: a result past 2 GiB (only hand-edited rows could make
        // one) is a decoding error, not a trap.
        guard total < Int(Int32.max) else {
            throw PostgresError(kind: .decoding, message: "a result of \(total) bytes is larger than one result may be (2 GiB)")
        }
        storage.bytes.reserveCapacity(total)
        for r in 0..<Int32(rowCount) {
            for c in 0..<Int32(columnCount) {
                if PQgetisnull(result, r, c) == 1 {
                    storage.cells.append(.init(offset: 0, length: -1))
                } else {
                    let length = Int(PQgetlength(result, r, c))
                    let pointer = UnsafeRawPointer(PQgetvalue(result, r, c)!)
                    storage.cells.append(.init(offset: Int32(storage.bytes.count), length: Int32(length)))
                    storage.bytes.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: length))
                }
            }
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresRows(columns: columns, storage: storage, affectedRows: affected)
    }

    private static let closedError = PostgresError(kind: .connection, message: "connection is closed")

    private static func field(_ result: OpaquePointer, _ code: Int32) -> String? {
        guard let pointer = PQresultErrorField(result, code) else { return nil }
        return String(cString: pointer)
    }

    private static func errorMessage(_ handle: OpaquePointer) -> String {
        guard let pointer = PQerrorMessage(handle) else { return "unknown libpq error" }
        return String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

// MARK: C string helpers

private func withBindValues<R>(_ binds: [PostgresBind], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    if binds.isEmpty { return body(nil) }
    var pointers: [UnsafePointer<CChar>?] = []
    pointers.reserveCapacity(binds.count)
    var owned: [UnsafeMutablePointer<CChar>] = []
    owned.reserveCapacity(binds.count)
    defer { owned.forEach { free($0) } }
    for bind in binds {
        if let text = bind.text {
            let copy = strdup(text)!
            owned.append(copy)
            pointers.append(UnsafePointer(copy))
        } else {
            pointers.append(nil)
        }
    }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

extension Array where Element == String {
    fileprivate func withCStrings<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let owned = map { strdup($0)! }
        defer { owned.forEach { free($0) } }
        var pointers: [UnsafePointer<CChar>?] = owned.map { UnsafePointer($0) }
        pointers.append(nil)
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// libpq's `PG_DIAG_*` field codes, which are character-literal macros Swift does not import.
private enum DiagField {
    static let sqlState = Int32(UInt8(ascii: "C"))
    static let messagePrimary = Int32(UInt8(ascii: "M"))
    static let detail = Int32(UInt8(ascii: "D"))
    static let constraintName = Int32(UInt8(ascii: "n"))
}
