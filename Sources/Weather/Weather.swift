/// Regions, weather providers and the per-region weather cache.
///
/// Entry points: `RegionStore` (catalog lookups and search, `RegionProviding`), `WeatherService`
/// (cached current weather, `WeatherProviding`), `RegionCatalog` (loads the bundled catalog).
public enum Weather {}
