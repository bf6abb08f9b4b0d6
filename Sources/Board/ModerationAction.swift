public enum ModerationAction: String, Sendable {
    case dismiss, remove, restore
}
