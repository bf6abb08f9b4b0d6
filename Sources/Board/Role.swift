public enum Role: String, Sendable, Codable, CaseIterable {
    case member
    case moderator
    case admin

    public var canModerate: Bool { self != .member }
}
