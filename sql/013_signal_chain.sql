-- 013: the signal chain (SPEC 11). Per model, each signal carries the hash of the one before it:
-- hash = sha256_hex(prev_hash || "\n" || canonical_json({id, model_id, model_version, model_hash,
-- pair, action, entry_price, as_of, created_at})), the first prev_hash 64 zeros, chain_seq counting
-- from 1. SQLite has no sha256, so the rows written before this migration are chained by
-- src/signals/chain-integrity.ts (backfillChains, run by openApp), in the order they were written
-- (as_of, id). The hashes' hex digits are not checked by a GLOB (3.5 us a signal, a tenth of the
-- chain's cost to a publish): the publisher writes them from sha256, and verify recomputes each.
ALTER TABLE signals ADD COLUMN model_version TEXT;
ALTER TABLE signals ADD COLUMN model_hash TEXT CHECK (length(model_hash) = 64);
ALTER TABLE signals ADD COLUMN chain_seq INTEGER CHECK (chain_seq >= 1);
ALTER TABLE signals ADD COLUMN prev_hash TEXT CHECK (length(prev_hash) = 64);
ALTER TABLE signals ADD COLUMN hash TEXT CHECK (length(hash) = 64);

-- The chain's order, and its head in one index step (chainHead).
CREATE UNIQUE INDEX signals_chain ON signals(model_id, chain_seq);
-- The rows still to be chained, found without reading the table (empty once the back-fill ran).
CREATE INDEX signals_unchained ON signals(model_id) WHERE hash IS NULL;

-- Set once the rows written before this migration are chained (one row, ever): from then on a
-- row without a link is never chained by anyone, and `signals verify` names it "unchained".
CREATE TABLE signal_chain_backfill (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  done_at TEXT NOT NULL
) STRICT;

-- Immutability, checked against this file at every serve start (src/signals/chain-integrity.ts): an
-- un-chained row (from before this migration) may receive its chain fields once and nothing else;
-- a chained row is never updated; no signal is ever deleted. (No INSERT trigger: it cost about
-- 20 us a signal, half the chain's price, and a row inserted without a link is named by verify.)
CREATE TRIGGER signals_no_update BEFORE UPDATE ON signals
WHEN OLD.hash IS NOT NULL
  OR NEW.model_version IS NULL OR NEW.model_hash IS NULL OR NEW.chain_seq IS NULL OR NEW.prev_hash IS NULL OR NEW.hash IS NULL
  OR NEW.id IS NOT OLD.id OR NEW.model_id IS NOT OLD.model_id OR NEW.pair IS NOT OLD.pair OR NEW.action IS NOT OLD.action
  OR NEW.direction IS NOT OLD.direction OR NEW.entry_price IS NOT OLD.entry_price OR NEW.as_of IS NOT OLD.as_of
  OR NEW.created_at IS NOT OLD.created_at
BEGIN SELECT RAISE(ABORT, 'signals are immutable: a chained signal is never updated'); END;

CREATE TRIGGER signals_no_delete BEFORE DELETE ON signals
BEGIN SELECT RAISE(ABORT, 'signals are immutable: a signal is never deleted'); END;
