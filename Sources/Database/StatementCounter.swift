import Synchronization

/// How many parameterized statements a pool's connections have run (alone, in a pipeline or in a transaction):
/// what "one statement per page" is checked against.
final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    func add() {
        count.add(1, ordering: .relaxed)
    }

    var value: Int { count.load(ordering: .relaxed) }
}
