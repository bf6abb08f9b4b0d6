import DequeModule
import Foundation
import HeapModule
import Synchronization

/// The FIFO of jobs shared by a pool's threads, and the only clock they follow.
///
/// At most `activeLimit` workers take jobs while the queue keeps moving; the others are a standby, called in
/// once the oldest job has waited `spareAfter` (see `PostgresConfiguration.activeConnections`).
///
/// Nothing polls. A parked worker blocks on its own semaphore until a job is handed to it. The timer thread
/// (`runTimer`) sleeps until the earliest moment something can fall due (a queued job's acquire deadline, or
/// the standby moment of the oldest job while a standby is free) and is woken only when a job brings that
/// moment forward. Its target is never recomputed when jobs leave the queue, so it may wake once for a
/// moment that no longer matters; it then finds nothing due and sleeps until the next real one, or
/// indefinitely when the queue is empty. An idle pool has every thread blocked without a timeout.
///
/// At most `maxWaiting` jobs wait (`DB_QUEUE_MAX`): past it, a new job fails at once with `.queueFull`
/// (503 `database_unavailable`), so a flood is refused instead of piling up until every job times out. No
/// operation scans the queue: a cancelled or expired job leaves the set of waiting jobs at once and its
/// entries in the FIFO and in the deadline heap are skipped when they come up (and dropped together when they
/// outnumber the waiting jobs), so cancelling is O(1) and a timer wake O(log n) per job it expires.
final class JobQueue: Sendable {
    let activeLimit: Int
    let spareAfter: UInt64
    let maxWaiting: Int
    private let state: Mutex<State>
    /// One per worker: a parked worker waits on its own, and whoever hands it work signals it.
    private let wakeups: [DispatchSemaphore]
    private let timerWakeup = DispatchSemaphore(value: 0)

    fileprivate struct State {
        /// The pool's workers.
        let workers: Int
        /// Jobs in arrival order; an entry whose job is no longer in `waiting` is skipped.
        var jobs: Deque<Job> = []
        /// The jobs waiting for a worker (in `jobs`, not yet taken, cancelled or expired).
        var waiting: Set<ObjectIdentifier> = []
        /// Acquire deadlines, earliest first; an entry whose job is no longer in `waiting` is skipped.
        var deadlines = Heap<Deadline>()
        /// Jobs accepted since start (for tests: a job is in the pool's hands once this has counted it).
        var accepted = 0
        /// Pool threads that have left their loops (for tests).
        var ended = 0
        /// Tests waiting for a condition on the queue's state.
        var watchers: [Watcher] = []
        var nextWatcher = 0
        /// Parked workers, the one parked last at the end (it is woken first: its stack and connection are warm).
        var idle: [Int] = []
        /// Workers running jobs.
        var busy = 0
        /// Workers taken off `idle` and signalled, which have not locked the queue again yet.
        var waking = 0
        var closed = false
        /// When the timer thread wakes next (`.max`: only when signalled).
        var timerTarget = UInt64.max
        /// The timer has been signalled and has not locked the queue since.
        var timerSignalled = false
        /// When the timer last called a standby in: it calls one at most every `spareAfter`.
        var lastStandby: UInt64 = 0
        var pipelines = 0
        var pipelinedStatements = 0
        /// Times a pool thread came back from waiting (for tests: an idle pool has none).
        var wakeCount = 0
        /// Kernel thread ids of the pool's threads (for tests: `/proc/self/task/<id>`).
        var threadIDs: [Int] = []
    }

    init(workers: Int, activeLimit: Int, spareAfter: UInt64, maxWaiting: Int) {
        self.activeLimit = activeLimit
        self.spareAfter = spareAfter
        self.maxWaiting = max(1, maxWaiting)
        self.wakeups = (0..<workers).map { _ in DispatchSemaphore(value: 0) }
        self.state = Mutex(State(workers: workers))
    }

    // MARK: Callers

    /// Queues a job with its completion, or fails it at once (pool shut down, task already cancelled).
    func enqueue(_ job: Job, completion: Job.Completion) {
        enum Step {
            case none
            case wake(Int)
            case wakeTimer
            case shutdown
            case full
            case cancelled
        }
        let step: Step = state.withLock { state in
            defer { state.notifyWatchers() }
            if state.closed { return .shutdown }
            if state.waiting.count >= maxWaiting { return .full }
            guard job.attach(completion) else { return .cancelled }
            state.jobs.append(job)
            state.waiting.insert(ObjectIdentifier(job))
            state.deadlines.insert(Deadline(at: job.deadline, job: job))
            state.accepted += 1
            if state.busy + state.waking < activeLimit, state.waking < state.waiting.count, let worker = state.idle.popLast() {
                state.waking += 1
                return .wake(worker)
            }
            // The job waits: the timer must wake by its deadline, and by the standby moment if it heads the queue.
            var moment = job.deadline
            if state.waiting.count == 1 && !state.idle.isEmpty {
                moment = min(moment, max(job.enqueued, state.lastStandby) &+ spareAfter)
            }
            return state.timer(moment) ? .wakeTimer : .none
        }
        switch step {
        case .none: break
        case .wake(let worker): wakeups[worker].signal()
        case .wakeTimer: timerWakeup.signal()
        case .shutdown: completion.fail(PostgresError(kind: .shutdown, message: "the database pool is shut down"))
        case .full:
            completion.fail(PostgresError(kind: .queueFull, message: "\(maxWaiting) jobs are already waiting for a database connection"))
        case .cancelled: completion.fail(CancellationError())
        }
    }

    /// The caller's task was cancelled: a waiting job leaves the queue and fails now (see `Job.cancel`).
    func cancel(_ job: Job) {
        guard job.cancel() else { return }
        let removed: Bool = state.withLock { state in
            guard state.waiting.remove(ObjectIdentifier(job)) != nil else { return false }
            state.compact()
            state.notifyWatchers()
            return true
        }
        // Not found: a worker has taken it and will see the cancellation before it starts, or the timer has
        // failed it.
        if removed { job.fail(CancellationError()) }
    }

    // MARK: Workers

    /// Blocks until there are jobs for `worker`; empty once the queue is closed. `finished` is false on the
    /// first call and then true: the worker's previous jobs are done.
    ///
    /// When the first job is a single statement, the single statements queued right behind it come along
    /// too, up to `limit` in all: they were waiting for a connection anyway. While other working
    /// connections are idle, the queue is shared out among them instead, so no statement waits behind
    /// another while a connection that could run it sits free.
    func next(worker: Int, limit: Int, finished: Bool) -> [Job] {
        enum Step {
            case run([Job], wake: Int?)
            case park(wakeTimer: Bool)
            case stop
        }
        var finished = finished
        var woken = false
        while true {
            let step: Step = state.withLock { state in
                defer { state.notifyWatchers() }
                if woken {
                    state.waking -= 1
                    state.wakeCount += 1
                }
                if finished { state.busy -= 1 }
                if let batch = state.take(limit: limit, activeLimit: activeLimit, spareAfter: spareAfter) {
                    var wake: Int?
                    if !state.waiting.isEmpty, state.busy + state.waking < activeLimit, let other = state.idle.popLast() {
                        state.waking += 1
                        wake = other
                    }
                    return .run(batch, wake: wake)
                }
                if state.closed { return .stop }
                state.idle.append(worker)
                // A standby is free now: the timer must call it in if the queue stops moving.
                guard let head = state.head() else { return .park(wakeTimer: false) }
                return .park(wakeTimer: state.timer(max(head.enqueued, state.lastStandby) &+ spareAfter))
            }
            finished = false
            switch step {
            case .run(let batch, let wake):
                if let wake { wakeups[wake].signal() }
                return batch
            case .stop:
                return []
            case .park(let wakeTimer):
                if wakeTimer { timerWakeup.signal() }
                wakeups[worker].wait()
                woken = true
            }
        }
    }

    // MARK: Timer

    /// The timer thread's loop: fails queued jobs whose acquire deadline has passed (each job has its own:
    /// `/readyz` waits 1 s, others longer), and calls a standby in when the oldest job has waited
    /// `spareAfter` (a slow statement or transaction holds a working connection). Returns once the queue is
    /// closed.
    func runTimer() {
        var woken = false
        while true {
            let (expired, standby, target, open): ([Job], Int?, UInt64, Bool) = state.withLock { state in
                defer { state.notifyWatchers() }
                state.timerSignalled = false
                if woken { state.wakeCount += 1 }
                guard !state.closed else { return ([], nil, .max, false) }
                let now = DispatchTime.now().uptimeNanoseconds
                var expired: [Job] = []
                while let earliest = state.deadlines.min, earliest.at <= now {
                    let job = state.deadlines.removeMin().job
                    if state.waiting.remove(ObjectIdentifier(job)) != nil { expired.append(job) }
                }
                if !expired.isEmpty { state.compact() }
                var standby: Int?
                if let head = state.head(), state.busy + state.waking >= activeLimit,
                    now >= max(head.enqueued, state.lastStandby) &+ spareAfter, let worker = state.idle.popLast()
                {
                    state.waking += 1
                    state.lastStandby = now
                    standby = worker
                }
                var target = state.earliestDeadline() ?? .max
                if let head = state.head(), !state.idle.isEmpty {
                    target = min(target, max(head.enqueued, state.lastStandby) &+ spareAfter)
                }
                state.timerTarget = target
                return (expired, standby, target, true)
            }
            for job in expired {
                job.fail(PostgresError(kind: .poolTimeout, message: "no database connection became free in time"))
            }
            if let standby { wakeups[standby].signal() }
            guard open else { return }
            if target == .max {
                timerWakeup.wait()
            } else {
                _ = timerWakeup.wait(timeout: DispatchTime(uptimeNanoseconds: target))
            }
            woken = true
        }
    }

    // MARK: Pool

    /// Closes the queue: queued jobs fail with `.shutdown`, later ones too; parked threads wake and end,
    /// working ones end after their current jobs.
    func close() {
        let (failed, idle): ([Job], [Int]) = state.withLock { state in
            guard !state.closed else { return ([], []) }
            defer { state.notifyWatchers() }
            state.closed = true
            let failed = Array(state.jobs.filter { state.waiting.contains(ObjectIdentifier($0)) })
            state.jobs.removeAll()
            state.waiting.removeAll()
            state.deadlines = Heap()
            let idle = state.idle
            state.idle.removeAll()
            state.waking += idle.count
            state.timerSignalled = true
            return (failed, idle)
        }
        for job in failed {
            job.fail(PostgresError(kind: .shutdown, message: "the database pool is shut down"))
        }
        for worker in idle { wakeups[worker].signal() }
        timerWakeup.signal()
    }

    /// Counts a pipeline of `statements` statements as sent.
    func countPipeline(_ statements: Int) {
        state.withLock { state in
            state.pipelines += 1
            state.pipelinedStatements += statements
        }
    }

    /// Pipelines sent, and the statements in them, since start.
    var pipelineCounts: (pipelines: Int, statements: Int) {
        state.withLock { ($0.pipelines, $0.pipelinedStatements) }
    }

    var usage: (inUse: Int, waiting: Int) {
        state.withLock { ($0.busy, $0.waiting.count) }
    }

    // MARK: Tests

    /// A pool thread has started (its kernel thread id, for tests).
    func started(threadID: Int) {
        state.withLock { state in
            state.threadIDs.append(threadID)
            state.notifyWatchers()
        }
    }

    /// A pool thread has left its loop (its last step; for tests).
    func ended() {
        state.withLock { state in
            state.ended += 1
            state.notifyWatchers()
        }
    }

    /// What tests wait for: a snapshot of the queue's state.
    struct Observation: Sendable {
        var inUse: Int
        var waiting: Int
        /// Jobs accepted since start.
        var accepted: Int
        var threadsStarted: Int
        var threadsEnded: Int
        /// Every thread blocked without a timeout (see `rest`).
        var atRest: Bool
    }

    var observation: Observation {
        state.withLock { $0.observation }
    }

    /// Returns true once `condition` holds of the queue's state (checked now and after each change), false
    /// when the task is cancelled first (for tests).
    func waitUntil(_ condition: @escaping @Sendable (Observation) -> Bool) async -> Bool {
        let id = state.withLock { state in
            state.nextWatcher += 1
            return state.nextWatcher
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // Under the lock, so a cancellation either comes before (and is seen here) or finds the watcher.
                let ready: Bool? = state.withLock { state in
                    if condition(state.observation) { return true }
                    if Task.isCancelled { return false }
                    state.watchers.append(Watcher(id: id, condition: condition, continuation: continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let watcher: Watcher? = state.withLock { state in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.watchers.remove(at: index)
            }
            watcher?.continuation.resume(returning: false)
        }
    }

    /// What tests check of an idle pool: how often its threads came back from waiting, whether every thread
    /// is blocked without a timeout (all workers parked, the timer without a target), and the thread ids.
    var rest: (wakeCount: Int, atRest: Bool, threadIDs: [Int]) {
        state.withLock { state in
            (state.wakeCount, state.observation.atRest, state.threadIDs)
        }
    }
}

/// A job's acquire deadline in the timer's heap.
private struct Deadline: Comparable {
    let at: UInt64
    let job: Job

    static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at < rhs.at }
    static func == (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at == rhs.at }
}

private struct Watcher {
    let id: Int
    let condition: @Sendable (JobQueue.Observation) -> Bool
    let continuation: CheckedContinuation<Bool, Never>
}

extension JobQueue.State {
    /// Whether a free worker should take the head job now, and the jobs it takes.
    fileprivate mutating func take(limit: Int, activeLimit: Int, spareAfter: UInt64) -> [Job]? {
        guard let head = head() else { return nil }
        guard busy < activeLimit || DispatchTime.now().uptimeNanoseconds >= head.enqueued &+ spareAfter else { return nil }
        let freeSlots = max(1, activeLimit - busy)
        let share = (waiting.count + freeSlots - 1) / freeSlots
        busy += 1
        var batch = [removeHead()]
        if batch[0].statement != nil {
            while batch.count < min(limit, share), let job = self.head(), job.statement != nil {
                batch.append(removeHead())
            }
        }
        // Taken jobs leave their deadlines behind in the heap.
        compact()
        return batch
    }

    /// The oldest waiting job, once the entries of jobs that left the queue before it are dropped.
    fileprivate mutating func head() -> Job? {
        while let first = jobs.first, !waiting.contains(ObjectIdentifier(first)) { jobs.removeFirst() }
        return jobs.first
    }

    /// Takes the head job (`head()` returned it) out of the queue.
    private mutating func removeHead() -> Job {
        let job = jobs.removeFirst()
        waiting.remove(ObjectIdentifier(job))
        return job
    }

    /// The earliest deadline of a waiting job, once the entries of jobs that left the queue are dropped.
    fileprivate mutating func earliestDeadline() -> UInt64? {
        while let earliest = deadlines.min, !waiting.contains(ObjectIdentifier(earliest.job)) { _ = deadlines.removeMin() }
        return deadlines.min?.at
    }

    /// Drops the entries of jobs that left the queue once they outnumber the waiting jobs: each removal is
    /// then paid for by the removals that made it necessary, and neither structure outgrows the bound by much.
    fileprivate mutating func compact() {
        let limit = 2 * waiting.count + 64
        if jobs.count > limit {
            jobs = jobs.filter { waiting.contains(ObjectIdentifier($0)) }
        }
        if deadlines.count > limit {
            deadlines = Heap(deadlines.unordered.filter { waiting.contains(ObjectIdentifier($0.job)) })
        }
    }

    fileprivate var observation: JobQueue.Observation {
        JobQueue.Observation(
            inUse: busy,
            waiting: waiting.count,
            accepted: accepted,
            threadsStarted: threadIDs.count,
            threadsEnded: ended,
            atRest: idle.count == workers && waking == 0 && busy == 0 && timerTarget == .max && !timerSignalled
        )
    }

    /// Resumes the tests whose condition now holds (nothing to do outside tests).
    fileprivate mutating func notifyWatchers() {
        guard !watchers.isEmpty else { return }
        let now = observation
        watchers.removeAll { watcher in
            guard watcher.condition(now) else { return false }
            watcher.continuation.resume(returning: true)
            return true
        }
    }

    /// Brings the timer's next wake-up forward to `moment` if it is earlier; true when the timer must be
    /// signalled for that (it is not already on its way).
    fileprivate mutating func timer(_ moment: UInt64) -> Bool {
        guard moment < timerTarget else { return false }
        timerTarget = moment
        guard !timerSignalled else { return false }
        timerSignalled = true
        return true
    }
}
