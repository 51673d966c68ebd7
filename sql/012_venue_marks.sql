-- 012: the venue's last price of each pair a tenant holds LIVE (SPEC 9: a LIVE trade is marked at
-- the venue's last price, refreshed every minute while a venue is connected). Written by the
-- executor's reconciliation pass (src/trading/live/reconciliation.ts); read by equity.
CREATE TABLE venue_marks (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id),
  pair       TEXT NOT NULL,
  price      REAL NOT NULL CHECK (price > 0),
  marked_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, pair)
) STRICT, WITHOUT ROWID;
