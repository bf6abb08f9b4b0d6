import ServiceLifecycle

extension Service {
    /// Runs `body` every `interval` (first after one interval) until graceful shutdown; the background services'
    /// one loop.
    func repeatUntilShutdown(every interval: Duration, _ body: @escaping @Sendable () async -> Void) async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                await body()
            }
        }
    }
}
