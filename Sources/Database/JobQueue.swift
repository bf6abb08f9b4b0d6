import DequeModule
import Foundation

/// The FIFO of jobs shared by a pool's threads: a mutex and a condition variable.
///
/// At most `activeLimit` workers take jobs while the queue keeps moving; the others are a standby, woken
/// by the watchdog once the oldest job has waited `spareAfter` (see `PostgresConfiguration.activeConnections`).
final class JobQueue: @unchecked Sendable {
    // Safety: every mutable field is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private let activeLimit: Int
    private let spareAfter: UInt64
    private var jobs: Deque<Job> = []
    private var busy = 0
    private var closed = false
    private var pipelines = 0
    private var pipelinedStatements = 0

    init(activeLimit: Int, spareAfter: UInt64) {
        self.activeLimit = activeLimit
        self.spareAfter = spareAfter
    }

    func enqueue(_ job: Job) {
        condition.lock()
        if closed {
            condition.unlock()
            job.fail(PostgresError(kind: .shutdown, message: "the database pool is shut down"))
            return
        }
        jobs.append(job)
        // Waking a worker that may not take the job would only cost a context switch.
        if busy < activeLimit { condition.signal() }
        condition.unlock()
    }

    /// Blocks until a job is available for this worker; empty once the queue is closed and drained.
    ///
    /// When the first job is a single statement, the single statements queued right behind it come
    /// along too, up to `limit` in all: they were waiting for a connection anyway. While other working
    /// connections are idle, the queue is shared out among them instead, so no statement waits behind
    /// another while a connection that could run it sits free.
    func next(limit: Int) -> [Job] {
        condition.lock()
        defer { condition.unlock() }
        while !mayTake(now: DispatchTime.now().uptimeNanoseconds) {
            if jobs.isEmpty && closed { return [] }
            condition.wait()
        }
        let freeSlots = max(1, activeLimit - busy)
        let share = (jobs.count + freeSlots - 1) / freeSlots
        busy += 1
        var batch = [jobs.removeFirst()]
        if batch[0].statement != nil {
            while batch.count < min(limit, share), let job = jobs.first, job.statement != nil {
                batch.append(jobs.removeFirst())
            }
        }
        if !jobs.isEmpty && busy < activeLimit { condition.signal() }
        return batch
    }

    /// Whether a free worker should take the head job now. Caller holds the lock.
    private func mayTake(now: UInt64) -> Bool {
        guard let oldest = jobs.first else { return false }
        return busy < activeLimit || closed || now >= oldest.enqueued &+ spareAfter
    }

    /// A worker is done with its jobs; `pipelined` is how many of them it sent as one pipeline (0: none).
    func finished(pipelined: Int) {
        condition.lock()
        busy -= 1
        if pipelined > 0 {
            pipelines += 1
            pipelinedStatements += pipelined
        }
        condition.unlock()
    }

    /// Pipelines sent, and the statements in them, since start.
    var pipelineCounts: (pipelines: Int, statements: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (pipelines, pipelinedStatements)
    }

    /// Fails jobs past their deadline (each job has its own: `/readyz` waits 1 s, others longer).
    /// Returns false once the queue is closed.
    func expireOverdue(now: UInt64) -> Bool {
        condition.lock()
        var expired: [Job] = []
        if jobs.contains(where: { $0.deadline <= now }) {
            var kept: Deque<Job> = []
            for job in jobs {
                if job.deadline <= now { expired.append(job) } else { kept.append(job) }
            }
            jobs = kept
        }
        let open = !closed
        if mayTake(now: now) { condition.signal() }
        condition.unlock()
        for job in expired {
            job.fail(PostgresError(kind: .poolTimeout, message: "no database connection became free in time"))
        }
        return open
    }

    var usage: (inUse: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (busy, jobs.count)
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
