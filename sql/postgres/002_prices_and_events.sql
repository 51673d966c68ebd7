-- 002 (PostgreSQL): daily candles, and the event log that webhooks deliver from (sql/002_prices_and_events.sql).

CREATE TABLE prices (
  pair    text NOT NULL,               -- BASE/QUOTE
  date    text NOT NULL,               -- YYYY-MM-DD, the UTC day the candle closes
  open    double precision NOT NULL,
  high    double precision NOT NULL,
  low     double precision NOT NULL,
  close   double precision NOT NULL,
  volume  double precision NOT NULL,
  PRIMARY KEY (pair, date)
);

-- Written in the transaction of the change that caused the event (see src/webhooks/events.ts).
CREATE TABLE events (
  id          text PRIMARY KEY,         -- evt_...
  tenant_id   text NOT NULL REFERENCES tenants(id),
  type        text NOT NULL,
  data        text NOT NULL,            -- JSON object
  created_at  text NOT NULL
);
CREATE INDEX events_tenant ON events(tenant_id, id);
