-- Extensions the schema relies on. Both are "trusted" in PostgreSQL 13+, so the database owner can create
-- them without superuser rights: `cube` (3-D points for index-backed nearest-region search) and `pg_trgm`.
CREATE EXTENSION IF NOT EXISTS cube;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
