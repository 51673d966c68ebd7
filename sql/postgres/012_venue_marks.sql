-- 012 (PostgreSQL): the venue's last price of each pair a tenant holds LIVE (sql/012_venue_marks.sql).
CREATE TABLE venue_marks (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  pair       text NOT NULL,
  price      double precision NOT NULL CHECK (price > 0),
  marked_at  text NOT NULL,
  PRIMARY KEY (tenant_id, pair)
);
