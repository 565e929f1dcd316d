-- Accounts, people, keys, and the money and request records.
-- Money columns are integer nano-USD (bigint, suffix _nano). Identifiers are prefixed text IDs made by the service.

CREATE TABLE accounts (
  id                 text PRIMARY KEY,
  kind               text NOT NULL DEFAULT 'accountless' CHECK (kind IN ('accountless', 'identity')),
  status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  suspended_reason   text,
  -- Account-level limits; NULL means the configured default applies.
  rpm_limit          integer CHECK (rpm_limit >= 0),
  tpm_limit          integer CHECK (tpm_limit >= 0),
  concurrency_limit  integer CHECK (concurrency_limit >= 0),
  created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id              text PRIMARY KEY,
  email           text UNIQUE,
  wallet_address  text UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Several members per account (teams); exactly one owner is enforced by the partial unique index.
CREATE TABLE memberships (
  account_id  text NOT NULL REFERENCES accounts (id),
  user_id     text NOT NULL REFERENCES users (id),
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, user_id)
);
CREATE UNIQUE INDEX memberships_one_owner ON memberships (account_id) WHERE role = 'owner';
CREATE INDEX memberships_user ON memberships (user_id);

-- Only the 14-character prefix and the sha256 of a key are stored, never the key itself.
CREATE TABLE api_keys (
  id                  text PRIMARY KEY,
  account_id          text NOT NULL REFERENCES accounts (id),
  name                text NOT NULL DEFAULT '',
  prefix              char(14) NOT NULL,
  key_hash            bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  -- Set when the key is rotated out: it works until then (24 hours of grace).
  expires_at          timestamptz,
  replaced_by         text REFERENCES api_keys (id),
  rpm_limit           integer CHECK (rpm_limit >= 0),
  tpm_limit           integer CHECK (tpm_limit >= 0),
  concurrency_limit   integer CHECK (concurrency_limit >= 0),
  daily_limit_nano    bigint CHECK (daily_limit_nano >= 0),
  monthly_limit_nano  bigint CHECK (monthly_limit_nano >= 0),
  -- NULL: every catalog model; otherwise exact model IDs.
  allowed_models      text[],
  created_at          timestamptz NOT NULL DEFAULT now(),
  revoked_at          timestamptz,
  last_used_at        timestamptz
);
CREATE INDEX api_keys_prefix ON api_keys (prefix);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- Append-only. The balance of an account is the sum of amount_nano over its rows.
-- charge rows carry the negative amount paid; writeoff rows move no money (amount_nano = 0) and record
-- in written_off_nano the cost the service absorbed.
CREATE TABLE ledger (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id        text NOT NULL REFERENCES accounts (id),
  key_id            text REFERENCES api_keys (id),
  request_id        text NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('credit', 'charge', 'writeoff', 'adjustment')),
  amount_nano       bigint NOT NULL,
  written_off_nano  bigint NOT NULL DEFAULT 0 CHECK (written_off_nano >= 0),
  reason            text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (request_id, kind),
  CHECK (kind <> 'credit' OR amount_nano > 0),
  CHECK (kind <> 'charge' OR amount_nano <= 0),
  CHECK (kind <> 'writeoff' OR amount_nano = 0)
);
CREATE INDEX ledger_account_time ON ledger (account_id, created_at);
CREATE INDEX ledger_key_time ON ledger (key_id, created_at) WHERE key_id IS NOT NULL;

CREATE FUNCTION ledger_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger rows are append-only';
END
$$;
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
  FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();

-- One row per request that reached authentication. Never the prompt or the completion.
-- No foreign keys: one row is written per request, always with the IDs of the key that authenticated it,
-- and the referential checks would cost more than the insert (accounts and keys are never deleted).
CREATE TABLE request_logs (
  request_id      text PRIMARY KEY,
  account_id      text NOT NULL,
  key_id          text NOT NULL,
  api_style       text NOT NULL,
  model           text,
  served_model    text,
  provider        text,
  stream          boolean NOT NULL DEFAULT false,
  status          integer NOT NULL,
  error_code      text,
  input_tokens    integer NOT NULL DEFAULT 0,
  cached_tokens   integer NOT NULL DEFAULT 0,
  output_tokens   integer NOT NULL DEFAULT 0,
  cost_nano       bigint NOT NULL DEFAULT 0,
  charged_nano    bigint NOT NULL DEFAULT 0,
  latency_ms      integer NOT NULL,
  first_byte_ms   integer,
  started_at      timestamptz NOT NULL,
  finished_at     timestamptz NOT NULL
);
CREATE INDEX request_logs_account_time ON request_logs (account_id, started_at DESC);
CREATE INDEX request_logs_key_time ON request_logs (key_id, started_at DESC);

-- Recent credits, read by the reconciliation that applies credits the live balance may have missed.
CREATE INDEX ledger_recent_credits ON ledger (created_at) WHERE kind = 'credit';
