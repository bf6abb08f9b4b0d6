public enum ReportReason: String, Sendable, CaseIterable {
    case spam, abuse, hate, sexual, misinformation, other
    /// Filed by the term filter, never by a person.
    case filter
}
