/// An edit's precondition (the API's `If-Match`): any existing post, or one of the listed versions.
public enum VersionPrecondition: Sendable, Equatable {
    case any
    case oneOf([Int])

    public func matches(_ version: Int) -> Bool {
        switch self {
        case .any: return true
        case .oneOf(let versions): return versions.contains(version)
        }
    }
}
