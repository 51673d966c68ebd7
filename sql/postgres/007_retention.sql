-- 007 (PostgreSQL): what the nightly retention reads to find expired rows (sql/007_retention.sql).
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
CREATE INDEX events_created ON events(created_at, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
