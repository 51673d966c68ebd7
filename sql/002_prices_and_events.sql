-- 002: daily candles, and the event log that webhooks deliver from.

CREATE TABLE prices (
  pair    TEXT NOT NULL,               -- BASE/QUOTE
  date    TEXT NOT NULL,               -- YYYY-MM-DD, the UTC day the candle closes
  open    REAL NOT NULL,
  high    REAL NOT NULL,
  low     REAL NOT NULL,
  close   REAL NOT NULL,
  volume  REAL NOT NULL,
  PRIMARY KEY (pair, date)
) STRICT, WITHOUT ROWID;

-- Written in the transaction of the change that caused the event (see src/webhooks/events.ts).
CREATE TABLE events (
  id          TEXT PRIMARY KEY,         -- evt_...
  tenant_id   TEXT NOT NULL REFERENCES tenants(id),
  type        TEXT NOT NULL,
  data        TEXT NOT NULL,            -- JSON object
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX events_tenant ON events(tenant_id, id);
