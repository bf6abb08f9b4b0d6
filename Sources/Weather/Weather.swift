/// Regions, weather providers and the per-region weather cache.
public enum Weather {}
