import Foundation

/// A line of the moderation log.
public struct ModerationLogEntry: Sendable, Equatable {
    public var id: Int
    public var moderatorID: Int?
    public var action: ModerationLogAction
    public var targetType: ModerationLogTarget
    public var targetID: String
    public var note: String?
    public var createdAt: Date

    public init(id: Int, moderatorID: Int?, action: ModerationLogAction, targetType: ModerationLogTarget, targetID: String, note: String?, createdAt: Date) {
        self.id = id
        self.moderatorID = moderatorID
        self.action = action
        self.targetType = targetType
        self.targetID = targetID
        self.note = note
        self.createdAt = createdAt
    }
}
