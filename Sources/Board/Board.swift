/// The board's domain: accounts, posts and moderation. Plain Swift types behind small protocols; the
/// PostgreSQL implementations live next to them.
public enum Board {}
