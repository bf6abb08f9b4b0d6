-- A post's conditions (CONTRACT §9): its region's weather when it was created, recorded once and never edited.
-- Columns of the post's own row, so every list reads them with the post (no join, no extra statement), and the
-- band is a plain column the `fit` order can index. Posts made before this have none (all four NULL).
-- Adding nullable columns without a default rewrites nothing; the checks are NOT VALID because every existing row
-- holds NULLs, which pass them: validating would only scan the whole table under this migration's lock (seconds at
-- 10M posts, with every write waiting). New and updated rows are checked all the same.
ALTER TABLE posts
    ADD COLUMN conditions_weather_type text,
    -- °C, one decimal: the value the post shows and its band is decided on.
    ADD COLUMN conditions_feels_like numeric(4,1),
    ADD COLUMN conditions_band text,
    ADD COLUMN conditions_observed_at timestamptz;

ALTER TABLE posts ADD CONSTRAINT posts_conditions_weather_type_check CHECK (conditions_weather_type IN
    ('clearSky', 'fewClouds', 'scatteredClouds', 'brokenClouds', 'showerRain', 'rain', 'thunderStorm', 'snow', 'mist', 'unknown')) NOT VALID;
ALTER TABLE posts ADD CONSTRAINT posts_conditions_band_check CHECK (conditions_band IN
    ('hot', 'warm', 'mild', 'cool', 'chilly', 'cold', 'veryCold', 'freezing')) NOT VALID;
-- All or nothing, and the band is the feels-like's own (Vocabulary's FeelsLikeBand, lower bounds inclusive).
ALTER TABLE posts ADD CONSTRAINT posts_conditions_whole CHECK (
    (conditions_weather_type IS NULL AND conditions_feels_like IS NULL AND conditions_band IS NULL AND conditions_observed_at IS NULL)
    OR (conditions_weather_type IS NOT NULL AND conditions_feels_like IS NOT NULL AND conditions_observed_at IS NOT NULL
        AND conditions_band = CASE
            WHEN conditions_feels_like >= 28 THEN 'hot'
            WHEN conditions_feels_like >= 23 THEN 'warm'
            WHEN conditions_feels_like >= 20 THEN 'mild'
            WHEN conditions_feels_like >= 17 THEN 'cool'
            WHEN conditions_feels_like >= 12 THEN 'chilly'
            WHEN conditions_feels_like >= 9 THEN 'cold'
            WHEN conditions_feels_like >= 5 THEN 'veryCold'
            ELSE 'freezing' END)
) NOT VALID;
