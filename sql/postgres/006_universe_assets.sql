-- 006 (PostgreSQL): Model.universe holds asset symbols ("BTC"); pairs are BASE/QUOTE (sql/006_universe_assets.sql).
-- GLOB '[A-Z0-9]*' (first character in the class) is the regular expression '^[A-Z0-9]'.
ALTER TABLE models ADD COLUMN quote_asset text NOT NULL DEFAULT 'USDT' CHECK (quote_asset ~ '^[A-Z0-9]');

-- The seeded models of 001 get their symbols. SQLite's json_each / json_group_array are
-- json_array_elements_text WITH ORDINALITY here; the array is written compact ('["BTC","ETH"]'),
-- as json_group_array writes it (json_agg would add spaces).
UPDATE models SET universe = (
  SELECT '[' || string_agg(to_json(split_part(t.value, '/', 1))::text, ',' ORDER BY t.ord) || ']'
  FROM json_array_elements_text(models.universe::json) WITH ORDINALITY AS t(value, ord))
WHERE universe LIKE '%/%';
