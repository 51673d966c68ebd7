-- 013 (PostgreSQL): the signal chain (sql/013_signal_chain.sql, SPEC 11). Per model, each signal
-- carries the hash of the one before it; see the SQLite file for the hash's definition.
ALTER TABLE signals ADD COLUMN model_version text;
ALTER TABLE signals ADD COLUMN model_hash text CHECK (length(model_hash) = 64);
ALTER TABLE signals ADD COLUMN chain_seq bigint CHECK (chain_seq >= 1);
ALTER TABLE signals ADD COLUMN prev_hash text CHECK (length(prev_hash) = 64);
ALTER TABLE signals ADD COLUMN hash text CHECK (length(hash) = 64);

CREATE UNIQUE INDEX signals_chain ON signals(model_id, chain_seq);
CREATE INDEX signals_unchained ON signals(model_id) WHERE hash IS NULL;

CREATE TABLE signal_chain_backfill (
  id      bigint PRIMARY KEY CHECK (id = 1),
  done_at text NOT NULL
);

-- Immutability, as SQLite's signals_no_update / signals_no_delete enforce it, with the same
-- messages: an un-chained row may receive its chain fields once and nothing else; a chained row is
-- never updated; no signal is ever deleted (nor truncated: PostgreSQL only). SQLite's `IS NOT` is
-- IS DISTINCT FROM here.
CREATE FUNCTION signals_no_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.hash IS NOT NULL
    OR NEW.model_version IS NULL OR NEW.model_hash IS NULL OR NEW.chain_seq IS NULL OR NEW.prev_hash IS NULL OR NEW.hash IS NULL
    OR NEW.id IS DISTINCT FROM OLD.id OR NEW.model_id IS DISTINCT FROM OLD.model_id OR NEW.pair IS DISTINCT FROM OLD.pair
    OR NEW.action IS DISTINCT FROM OLD.action OR NEW.direction IS DISTINCT FROM OLD.direction
    OR NEW.entry_price IS DISTINCT FROM OLD.entry_price OR NEW.as_of IS DISTINCT FROM OLD.as_of
    OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
    RAISE EXCEPTION 'signals are immutable: a chained signal is never updated';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER signals_no_update BEFORE UPDATE ON signals FOR EACH ROW EXECUTE FUNCTION signals_no_update();

CREATE FUNCTION signals_no_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'signals are immutable: a signal is never deleted';
END;
$$;
CREATE TRIGGER signals_no_delete BEFORE DELETE ON signals FOR EACH ROW EXECUTE FUNCTION signals_no_delete();
CREATE TRIGGER signals_no_truncate BEFORE TRUNCATE ON signals FOR EACH STATEMENT EXECUTE FUNCTION signals_no_delete();
