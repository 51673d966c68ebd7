-- 024: trades_tenant_open (008) was trades_open (003) again: the same columns, the same condition.
-- Every trade opened, grown or closed wrote both; the planner only ever needed one.
DROP INDEX trades_tenant_open;
