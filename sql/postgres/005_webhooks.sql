-- 005 (PostgreSQL): webhook endpoints and their delivery outbox (sql/005_webhooks.sql, SPEC section 7).

CREATE TABLE webhooks (
  id                     text PRIMARY KEY,            -- wh_...
  tenant_id              text NOT NULL REFERENCES tenants(id),
  url                    text NOT NULL,
  description            text,
  events                 text NOT NULL,               -- JSON array of event types, or ["*"]
  status                 text NOT NULL CHECK (status IN ('ACTIVE', 'DISABLED')),
  secret                 text NOT NULL,
  previous_secret        text,
  previous_secret_until  text,
  failing_since          text,
  created_at             text NOT NULL,
  updated_at             text NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks(tenant_id, status);

CREATE TABLE webhook_deliveries (
  id                text PRIMARY KEY,                 -- dlv_...
  webhook_id        text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  tenant_id         text NOT NULL REFERENCES tenants(id),
  event_id          text NOT NULL REFERENCES events(id),
  event_type        text NOT NULL,
  status            text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  attempts          bigint NOT NULL DEFAULT 0,
  next_attempt_at   bigint NOT NULL,                  -- epoch ms; due when <= now
  last_attempt_at   text,
  last_status_code  bigint,
  last_error        text,
  delivered_at      text,
  redelivery_of     text,
  created_at        text NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(webhook_id, id);
CREATE INDEX webhook_deliveries_first ON webhook_deliveries(webhook_id, id) WHERE status = 'PENDING' AND attempts = 0;
CREATE INDEX webhook_deliveries_retry ON webhook_deliveries(webhook_id, next_attempt_at) WHERE status = 'PENDING' AND attempts > 0;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, webhook_id) WHERE status = 'PENDING';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at) WHERE status <> 'PENDING';
