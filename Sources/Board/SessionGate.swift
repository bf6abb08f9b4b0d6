import Database
import Synchronization

/// A bearer token whose session is not checked yet (CONTRACT §3): the request's read checks it inside its own
/// statement (`PostgresAccountStore.gated`), so a signed-in read crosses the data layer once, as an anonymous one does.
/// A request that reads nothing through a gate checks it by a statement of its own (`resolve`). Either way the check
/// runs on the primary, where a logout, a ban, a deletion or an upgrade has committed: nothing is cached past the
/// request.
///
/// Shared by every copy of a request's context: the first check settles it, for good.
public final class SessionGate: Sendable {
    public let tokenHash: String
    let store: any AccountStore
    let counts: SessionCheckCounts
    private let outcome = Mutex<Outcome?>(nil)

    enum Outcome {
        case identity(Identity)
        case refused
    }

    init(tokenHash: String, store: any AccountStore, counts: SessionCheckCounts) {
        self.tokenHash = tokenHash
        self.store = store
        self.counts = counts
    }

    /// The session's account id, in a statement the gate wraps (`Visibility.account` of `Visibility.Reader.session`).
    public static let account: SQLQuery = "(SELECT me.me_id FROM me)"

    /// What a check has settled the gate on, if one has.
    var settled: Outcome? { outcome.withLock { $0 } }

    /// The caller, once the gate has settled on one.
    public var identity: Identity? {
        outcome.withLock { if case .identity(let identity)? = $0 { identity } else { nil } }
    }

    /// The caller, checked by a statement of its own unless a read has checked it already; `unauthenticated` for a
    /// token with no live session.
    public func resolve() async throws -> Identity {
        switch outcome.withLock({ $0 }) {
        case .identity(let identity)?: return identity
        case .refused?: throw BoardError.unauthenticated
        case nil:
            counts.add(.statement)
            return try settle(await store.identity(tokenHash: tokenHash))
        }
    }

    /// Settles the gate on what a check found (a gated read's `me`, or `resolve`'s statement): the caller, or
    /// `unauthenticated`.
    func settle(_ found: Identity?) throws -> Identity {
        let settled = outcome.withLock { outcome -> Outcome in
            if let outcome { return outcome }
            let new: Outcome = found.map { .identity($0) } ?? .refused
            outcome = new
            return new
        }
        guard case .identity(let identity) = settled else {
            counts.add(.refused)
            throw BoardError.unauthenticated
        }
        return identity
    }
}

/// How a process's session checks ran, for `/metrics`: `auth_session_checks_total{how}` and `auth_refused_total`.
public final class SessionCheckCounts: Sendable {
    public enum Kind: CaseIterable, Sendable {
        /// A statement of its own, before the request's work.
        case statement
        /// Inside the read's own statement.
        case inRead
        /// Inside the write's own transaction, as its first statement.
        case inWrite
        /// A token refused (401).
        case refused
    }

    private let statement = Atomic<Int>(0)
    private let inRead = Atomic<Int>(0)
    private let inWrite = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    public init() {}

    public func add(_ kind: Kind) {
        switch kind {
        case .statement: statement.add(1, ordering: .relaxed)
        case .inRead: inRead.add(1, ordering: .relaxed)
        case .inWrite: inWrite.add(1, ordering: .relaxed)
        case .refused: refused.add(1, ordering: .relaxed)
        }
    }

    public func value(_ kind: Kind) -> Int {
        switch kind {
        case .statement: statement.load(ordering: .relaxed)
        case .inRead: inRead.load(ordering: .relaxed)
        case .inWrite: inWrite.load(ordering: .relaxed)
        case .refused: refused.load(ordering: .relaxed)
        }
    }
}
