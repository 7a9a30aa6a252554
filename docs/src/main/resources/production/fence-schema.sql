-- The fence table's schema (chapter "Production checklist"), checked by ProductionSnippetsTests
-- against JdbcLockFence.createTableSql().
-- tag::fence[]
CREATE TABLE IF NOT EXISTS zk_lock_fence (lock_path VARCHAR(1024) PRIMARY KEY, fencing_token BIGINT NOT NULL);
-- end::fence[]
