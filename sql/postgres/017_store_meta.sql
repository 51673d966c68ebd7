-- 017 (PostgreSQL): nothing to do. SQLite's sql/017_store_meta.sql creates store_meta, which
-- PostgreSQL's Store needs before any migration: sql/postgres/000_store.sql made it already.
-- The file keeps the numbering (file N here leaves the schema as SQLite's file N does).
SELECT 1;
