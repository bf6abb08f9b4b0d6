import Board
import Logging
import ServiceLifecycle

/// The services that send (CONTRACT §14): the queue's worker and the briefing scheduler, when there is a sender
/// (`PUSH=apns`, or a test's); none with `PUSH=off`.
func pushServices(dependencies: AppDependencies, logger: Logger, briefingInterval: Duration = .seconds(5)) -> [any Service] {
    guard let sender = dependencies.pushSender, dependencies.push.enabled else { return [] }
    let delivery = PushDelivery(
        queue: dependencies.push, database: dependencies.database, sender: sender, logger: logger, observe: dependencies.metrics.recordPush,
        observeDepth: dependencies.metrics.recordPushQueueDepth
    )
    return [
        PushDeliveryService(delivery: delivery, sender: sender, metrics: dependencies.metrics),
        BriefingService(dependencies: dependencies, interval: briefingInterval, logger: logger),
    ]
}
