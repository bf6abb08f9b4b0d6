import Foundation

/// Stops calling a provider that keeps failing: after `threshold` consecutive failures the circuit opens for
/// `cooldown`; then one trial call is let through (half-open): success closes it, failure opens it again. A
/// provider's `Retry-After` opens it at once, for as long as asked (`hold`).
struct CircuitBreaker: Sendable {
    enum State: Sendable, Equatable {
        case closed
        case open(until: Date)
        case halfOpen
    }

    let threshold: Int
    let cooldown: TimeInterval
    private(set) var state: State = .closed
    private(set) var consecutiveFailures = 0
    private var trialInFlight = false

    init(threshold: Int, cooldown: TimeInterval) {
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
    }

    /// Whether a call may go out now. In half-open state only one trial call is allowed at a time.
    mutating func allowsRequest(now: Date) -> Bool {
        switch state {
        case .closed:
            return true
        case .open(let until):
            guard now >= until else { return false }
            state = .halfOpen
            trialInFlight = true
            return true
        case .halfOpen:
            if trialInFlight { return false }
            trialInFlight = true
            return true
        }
    }

    /// The call `allowsRequest` let through did not go out after all (the upstream budget refused it): a
    /// half-open breaker may let the next one through instead.
    mutating func callNotMade() {
        trialInFlight = false
    }

    mutating func recordSuccess() {
        state = .closed
        consecutiveFailures = 0
        trialInFlight = false
    }

    mutating func recordFailure(now: Date) {
        consecutiveFailures += 1
        trialInFlight = false
        if state == .halfOpen || consecutiveFailures >= threshold {
            state = .open(until: now.addingTimeInterval(cooldown))
        }
    }

    /// The provider asked not to be called before `until` (`Retry-After`): open until then, whatever the count, then
    /// one trial call as after any opening. An earlier `until` than the breaker's own does not shorten it.
    mutating func hold(until: Date) {
        trialInFlight = false
        if case .open(let current) = state, current >= until { return }
        state = .open(until: until)
    }

    /// Whole seconds until an open breaker lets a trial call through; nil when it is not open.
    func secondsUntilTrial(now: Date) -> Int? {
        guard case .open(let until) = state else { return nil }
        let seconds = until.timeIntervalSince(now).rounded(.up)
        return seconds.isFinite ? max(1, Int(min(seconds, 86_400))) : nil
    }

    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }
}
