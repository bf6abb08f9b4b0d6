/// Where a new post is: a region id, or coordinates to snap to the nearest region (never stored).
public enum PostLocation: Sendable, Equatable {
    case region(Int)
    case coordinates(lat: Double, lon: Double)
}
