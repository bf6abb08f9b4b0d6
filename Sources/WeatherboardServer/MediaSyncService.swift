import Board
import Logging
import ServiceLifecycle

/// Keeps media files on the side their posts allow: every `interval`, the media whose post changed
/// visibility (hidden, removed, deleted, restored) have their files moved between `public/` and `private/`.
/// Moderation decisions also run it at once; this loop catches the rest (report auto-hides, retries).
struct MediaSyncService: Service {
    let media: MediaService
    let interval: Duration
    let metrics: AppMetrics

    func run() async throws {
        await repeatUntilShutdown(every: interval) {
            let moved = await media.syncVisibility()
            if moved > 0 { metrics.recordMediaMoves(moved) }
        }
    }
}
