-- Extensions the schema relies on. All are "trusted" in PostgreSQL 13+, so the database owner can create them.
CREATE EXTENSION IF NOT EXISTS cube;
CREATE EXTENSION IF NOT EXISTS earthdistance;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
