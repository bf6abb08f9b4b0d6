public enum AccountKind: String, Sendable, Codable {
    case anonymous
    case registered
}
