-- A key's limits and caps are positive or NULL. A stored 0 was admitted as "no limit" while the dashboard
-- showed a limit of 0 (a $0 cap); it becomes the NULL it meant, and 0 can no longer be stored.
UPDATE api_keys SET rpm_limit = NULL WHERE rpm_limit = 0;
UPDATE api_keys SET tpm_limit = NULL WHERE tpm_limit = 0;
UPDATE api_keys SET concurrency_limit = NULL WHERE concurrency_limit = 0;
UPDATE api_keys SET daily_limit_nano = NULL WHERE daily_limit_nano = 0;
UPDATE api_keys SET monthly_limit_nano = NULL WHERE monthly_limit_nano = 0;
ALTER TABLE api_keys
  DROP CONSTRAINT api_keys_rpm_limit_check,
  DROP CONSTRAINT api_keys_tpm_limit_check,
  DROP CONSTRAINT api_keys_concurrency_limit_check,
  DROP CONSTRAINT api_keys_daily_limit_nano_check,
  DROP CONSTRAINT api_keys_monthly_limit_nano_check,
  ADD CONSTRAINT api_keys_rpm_limit_check CHECK (rpm_limit > 0),
  ADD CONSTRAINT api_keys_tpm_limit_check CHECK (tpm_limit > 0),
  ADD CONSTRAINT api_keys_concurrency_limit_check CHECK (concurrency_limit > 0),
  ADD CONSTRAINT api_keys_daily_limit_nano_check CHECK (daily_limit_nano > 0),
  ADD CONSTRAINT api_keys_monthly_limit_nano_check CHECK (monthly_limit_nano > 0);
