-- 021: alert hooks (SPEC 16): TradingView and other senders that cannot sign post alerts to
-- /hooks/alerts/{id}; an accepted alert is an order of the tenant through the same risk gate.
-- secret_sealed: the hook's secret, sealed with the data dir's secrets.key and bound to the tenant
-- and the hook (the receiver reads it back to compare in constant time). source_cidrs: a JSON array
-- of CIDRs the sender must come from, NULL for any. refused_count: the refusals that record nothing
-- else (a wrong secret, a source outside source_cidrs). revoked_at: NULL while the hook is live.
CREATE TABLE alert_hooks (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL REFERENCES tenants(id),
  name             TEXT NOT NULL,
  mode             TEXT NOT NULL CHECK (mode IN ('PAPER', 'LIVE')),
  model_id         TEXT REFERENCES models(id),
  max_age_seconds  INTEGER NOT NULL CHECK (max_age_seconds > 0),
  source_cidrs     TEXT,
  secret_sealed    TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  revoked_at       TEXT,
  refused_count    INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX alert_hooks_tenant ON alert_hooks(tenant_id, id);

-- What arrived at a hook, accepted or refused after its secret was checked, with the reason and
-- the order it became. alert_id: the message's own "id" (a duplicate within 24 h places nothing).
-- message: the message as it came, its secret taken out. Kept like webhook deliveries (SPEC 8).
CREATE TABLE alerts (
  seq          INTEGER PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  hook_id      TEXT NOT NULL REFERENCES alert_hooks(id),
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  alert_id     TEXT,
  received_at  TEXT NOT NULL,
  outcome      TEXT NOT NULL CHECK (outcome IN ('ACCEPTED', 'REFUSED', 'DUPLICATE')),
  code         TEXT,
  reason       TEXT,
  order_id     TEXT REFERENCES orders(id),
  message      TEXT NOT NULL
) STRICT;
CREATE INDEX alerts_hook ON alerts(hook_id, seq);
CREATE INDEX alerts_dedupe ON alerts(hook_id, alert_id, received_at) WHERE outcome = 'ACCEPTED';
CREATE INDEX alerts_received ON alerts(received_at);
