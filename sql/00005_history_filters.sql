-- Indexes for the dashboard's filtered history: the activity list by model or errors, and the ledger by
-- kind. Each filter stays one index range in time order, so a page reads about its own rows however long
-- the account's history is. The request log by key already has request_logs_key_time.

-- Activity by model: the model a request counts under in usage (served, else asked for, else '').
CREATE INDEX request_logs_account_model_time ON request_logs (account_id, (coalesce(served_model, model, '')), started_at DESC);

-- Activity by errors (status 400 or above): only error rows are in it, so the writes of ok requests skip it.
CREATE INDEX request_logs_account_errors ON request_logs (account_id, started_at DESC) WHERE status >= 400;

-- The ledger by kind: credits, write-offs and adjustments are few among charges (one per request), so they
-- get a small index of their own, in time order per kind; charges read ledger_account_time, whose rows are
-- nearly all charges.
CREATE INDEX ledger_account_rare_kinds ON ledger (account_id, kind, created_at) WHERE kind <> 'charge';
