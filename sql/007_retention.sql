-- 007: what the nightly retention (src/store/retention.ts, SPEC section 8) reads to find expired
-- rows without scanning whole tables, one small batch at a time.

-- Idempotency keys older than 24 h, oldest first.
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
-- Events past the retention, in a stable order the purge can resume from.
CREATE INDEX events_created ON events(created_at, id);
-- Whether an event still has a delivery; also what deleting an event checks for its foreign key,
-- which would otherwise scan every delivery for each event deleted.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
