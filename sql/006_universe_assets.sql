-- 006: Model.universe holds asset symbols ("BTC"), as the service description defines it; every
-- model trades them against its quote asset, so its pairs are BASE/QUOTE ("BTC/USDT").
ALTER TABLE models ADD COLUMN quote_asset TEXT NOT NULL DEFAULT 'USDT' CHECK (quote_asset GLOB '[A-Z0-9]*');

UPDATE models SET universe = (
  SELECT json_group_array(base) FROM (
    SELECT substr(value, 1, instr(value, '/') - 1) AS base FROM json_each(models.universe) ORDER BY key))
WHERE universe LIKE '%/%';
