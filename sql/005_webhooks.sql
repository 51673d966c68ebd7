-- 005: webhook endpoints and their delivery outbox (SPEC section 7).

-- The signing secret has to be kept to sign; it is never logged and never shown after creation and
-- rotation. previous_secret stays valid (webhook-signature lists both) until previous_secret_until.
CREATE TABLE webhooks (
  id                     TEXT PRIMARY KEY,            -- wh_...
  tenant_id              TEXT NOT NULL REFERENCES tenants(id),
  url                    TEXT NOT NULL,               -- https only, checked by src/webhooks/url-guard.ts
  description            TEXT,
  events                 TEXT NOT NULL,               -- JSON array of event types, or ["*"]
  status                 TEXT NOT NULL CHECK (status IN ('ACTIVE', 'DISABLED')),
  secret                 TEXT NOT NULL,               -- whsec_ + base64 of 32 random bytes
  previous_secret        TEXT,
  previous_secret_until  TEXT,                        -- ISO time; the old secret signs until then
  failing_since          TEXT,                        -- first failure after the last success
  created_at             TEXT NOT NULL,
  updated_at             TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_tenant ON webhooks(tenant_id, status);

-- The outbox: one row per (event, endpoint), written in the transaction of the change that caused
-- the event. The sender reads it; a crash between commit and delivery loses nothing.
CREATE TABLE webhook_deliveries (
  id                TEXT PRIMARY KEY,                 -- dlv_..., the X-Service-Delivery header
  webhook_id        TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  tenant_id         TEXT NOT NULL REFERENCES tenants(id),
  event_id          TEXT NOT NULL REFERENCES events(id),
  event_type        TEXT NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  attempts          INTEGER NOT NULL DEFAULT 0,       -- attempts made so far
  next_attempt_at   INTEGER NOT NULL,                 -- epoch ms; due when <= now
  last_attempt_at   TEXT,
  last_status_code  INTEGER,
  last_error        TEXT,
  delivered_at      TEXT,
  redelivery_of     TEXT,                             -- dlv_... this one was redelivered from
  created_at        TEXT NOT NULL
) STRICT;
-- Newest-first listing per endpoint, and the sender's in-order queue of first attempts.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(webhook_id, id);
CREATE INDEX webhook_deliveries_first ON webhook_deliveries(webhook_id, id) WHERE status = 'PENDING' AND attempts = 0;
CREATE INDEX webhook_deliveries_retry ON webhook_deliveries(webhook_id, next_attempt_at) WHERE status = 'PENDING' AND attempts > 0;
-- The sender's scan for endpoints with due work.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, webhook_id) WHERE status = 'PENDING';
-- Pruning of finished deliveries.
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at) WHERE status <> 'PENDING';
