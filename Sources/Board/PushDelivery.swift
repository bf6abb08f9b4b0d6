import Database
import Foundation
import Logging
import Push
import Synchronization

/// The queue's worker (CONTRACT §14): claims what is due (`PushQueue.claim`), sends it all at once through one
/// `APNsSending` (one HTTP/2 connection per environment, many streams), and settles each answer as §14 says:
/// delivered; the device removed (410 later than its registration, a bad token); tried again with exponential backoff
/// and jitter until it expires (429, 5xx, a reset or lost connection); or, when APNs refuses the provider token or the
/// topic, that environment's sending paused a while, the error logged and counted, the device kept. Every instance
/// runs one; `FOR UPDATE SKIP LOCKED` gives each row to one of them.
public final class PushDelivery: Sendable {
    public struct Options: Sendable {
        /// Most notifications claimed (and sent at once) a round.
        public var batchSize = 500
        /// Rounds in flight at once (each claims its own batch): one round's sends overlap another's claim and settling.
        public var concurrentRounds = 4
        /// The wait after a round that did not fill its batch (the first loop's; the others wait four times as long, so
        /// they claim only while a backlog lasts). A reply's notification waits at most about this long to be claimed.
        public var idle: Duration = .seconds(1)
        /// How long an environment's sending pauses after APNs refused the provider token or the topic.
        public var pauseSeconds: TimeInterval = 60
        /// Backoff after the first failure, doubled each try, at most `maxBackoffSeconds`; each with ±50 % jitter.
        public var firstBackoffSeconds: TimeInterval = 1
        public var maxBackoffSeconds: TimeInterval = 300

        public init() {}
    }

    /// What the worker reports, for `/metrics`: a notification's kind and result, and for a delivery the seconds
    /// since it was queued.
    public typealias Observer = @Sendable (_ kind: PushQueue.Kind, _ result: String, _ delivered: TimeInterval?) -> Void

    let queue: PushQueue
    let database: PostgresPool
    let sender: any APNsSending
    let options: Options
    let observe: Observer
    /// Told `push_queue_depth` (`recordDepth`).
    let observeDepth: @Sendable (Int) -> Void
    let logger: Logger
    /// Environments whose sending is paused, until when.
    private let paused = Mutex<[APNsPush.Environment: Date]>([:])

    public init(
        queue: PushQueue, database: PostgresPool, sender: any APNsSending, options: Options = Options(), logger: Logger,
        observe: @escaping Observer = { _, _, _ in }, observeDepth: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.observeDepth = observeDepth
        self.queue = queue
        self.database = database
        self.sender = sender
        self.options = options
        self.logger = logger
        self.observe = observe
    }

    /// Works the queue until cancelled, `concurrentRounds` rounds at a time. A failed round (the database away) is
    /// logged and tried again after `idle`.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<max(1, options.concurrentRounds) {
                group.addTask { await self.loop(idle: index == 0 ? self.options.idle : self.options.idle * 4) }
            }
        }
    }

    /// One of `run`'s loops: rounds back to back while they fill their batch, else `idle` between them.
    func loop(idle: Duration) async {
        while !Task.isCancelled {
            do {
                if try await round() >= options.batchSize { continue }
            } catch is CancellationError {
                return
            } catch {
                logger.error("push round failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: idle)
        }
    }

    /// One round: claims what is due, sends it, settles every answer. Returns how many it claimed.
    @discardableResult
    public func round() async throws -> Int {
        var claimed = try await queue.claim(limit: options.batchSize, on: database)
        guard !claimed.isEmpty else { return 0 }
        try await queue.admitReplies(&claimed, on: database)
        let now = queue.policy.clock()
        let sending = claimed.filter { $0.dropped != "folded" }
        let settled = await withTaskGroup(of: (Int, String, PushQueue.Settlement).self) { group in
            for item in sending {
                group.addTask { (item.id, item.push.deviceToken, await self.deliver(item, now: now)) }
            }
            var all: [(id: Int, token: String, settlement: PushQueue.Settlement)] = []
            for await one in group { all.append(one) }
            return all
        }
        try await queue.settle(settled, on: database)
        return claimed.count
    }

    /// Sends one claimed notification (unless it is dropped, or its environment paused) and decides what becomes of it.
    func deliver(_ item: PushQueue.Claimed, now: Date) async -> PushQueue.Settlement {
        if let reason = item.dropped {
            observe(item.kind, reason == "expired" ? "expired" : "dropped", nil)
            return .done(result: reason == "expired" ? "expired" : "dropped")
        }
        if let until = paused.withLock({ $0[item.push.environment] }), until > now {
            return .retry(after: until)
        }
        let answer = await sender.send(item.push)
        switch answer {
        case .delivered:
            observe(item.kind, "delivered", queue.policy.clock().timeIntervalSince(item.queuedAt))
            return .done(result: "delivered")
        case .unregistered(let since):
            observe(item.kind, "unregistered", nil)
            if let since, since <= item.registeredAtMilliseconds {
                // The app was removed before this registration: the device stays; this notification is done.
                return .done(result: "unregistered")
            }
            return .removeDevice(result: "unregistered", sinceMilliseconds: since)
        case .badDeviceToken(let reason):
            observe(item.kind, "bad_device_token", nil)
            logger.info("APNs refused a device token", metadata: ["reason": "\(reason)"])
            return .removeDevice(result: "badDeviceToken", sinceMilliseconds: nil)
        case .retry(let reason):
            let after = now.addingTimeInterval(backoff(attempt: item.attempts))
            if after.timeIntervalSince1970 >= Double(item.push.expiration) {
                observe(item.kind, "expired", nil)
                return .done(result: "expired")
            }
            observe(item.kind, "retry", nil)
            logger.debug("push to retry", metadata: ["reason": "\(reason)", "attempt": "\(item.attempts)"])
            return .retry(after: after)
        case .environmentRefused(let reason):
            let until = now.addingTimeInterval(options.pauseSeconds)
            paused.withLock { $0[item.push.environment] = until }
            observe(item.kind, "environment_refused", nil)
            logger.error(
                "APNs refused the provider token or topic: sending paused",
                metadata: ["environment": "\(item.push.environment.rawValue)", "reason": "\(reason)", "seconds": "\(Int(options.pauseSeconds))"]
            )
            return .retry(after: until)
        case .rejected(let status, let reason):
            observe(item.kind, "rejected", nil)
            logger.warning("APNs rejected a notification", metadata: ["status": "\(status)", "reason": "\(reason)"])
            return .done(result: "rejected")
        }
    }

    /// The wait before try `attempt + 1`: `firstBackoffSeconds` doubled each try, capped, with ±50 % jitter.
    func backoff(attempt: Int) -> TimeInterval {
        let base = min(options.maxBackoffSeconds, options.firstBackoffSeconds * pow(2, Double(min(max(attempt - 1, 0), 20))))
        return base * Double.random(in: 0.5...1.5)
    }

    /// Counts the notifications not yet answered and tells `observeDepth` (`push_queue_depth`).
    public func recordDepth() async {
        if let depth = try? await queue.depth(on: database) { observeDepth(depth) }
    }

    /// Whether `environment`'s sending is paused now.
    public func isPaused(_ environment: APNsPush.Environment) -> Bool {
        paused.withLock { $0[environment] }.map { $0 > queue.policy.clock() } ?? false
    }
}
