"""Plan → rows: the only database access of the dialect (run_sql, the executor, reads, the
compiler, backends, the clock, the time limit, idempotency and the query log)."""
