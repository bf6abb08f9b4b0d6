public enum ReportOutcome: String, Sendable {
    case open, dismissed, actioned
}
