-- Routing and policy: presets, account-wide routing restrictions, guardrails, operator pauses of
-- providers, and image requests with their billing status.

-- Account-wide routing restrictions: NULL means no restriction.
ALTER TABLE accounts
  ADD COLUMN allowed_models text[],
  ADD COLUMN allowed_providers text[];

-- A saved model choice, called as @preset/<slug>: the model, its fallbacks, and default parameters
-- (temperature, top_p, max_tokens, stop) applied where the request sets none.
CREATE TABLE presets (
  account_id  text NOT NULL REFERENCES accounts (id),
  slug        text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  model       text NOT NULL,
  fallbacks   text[] NOT NULL DEFAULT '{}' CHECK (cardinality(fallbacks) <= 3),
  params      jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, slug)
);

-- A guardrail: an allowed-model list, a monthly budget across the keys assigned to it (UTC months,
-- open holds count), and content filters ({detector, action, patterns?, keywords?, label?}).
CREATE TABLE guardrails (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id),
  name           text NOT NULL,
  allowed_models text[],
  budget_nano    bigint CHECK (budget_nano >= 0),
  filters        jsonb NOT NULL DEFAULT '[]',
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  -- Operators and the dashboard tell an account's guardrails apart by name; also the account's index.
  UNIQUE (account_id, name)
);

ALTER TABLE api_keys ADD COLUMN guardrail_id text REFERENCES guardrails (id);

-- A provider's capacity paused by an operator: requests skip it, or get 503
-- upstream_capacity_unavailable with Retry-After when no other route is left.
CREATE TABLE provider_pauses (
  provider_id   text PRIMARY KEY,
  paused_until  timestamptz NOT NULL,
  reason        text NOT NULL DEFAULT '',
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- Image requests and their billing status, readable by the account that made them. A row is written
-- (pending) before the provider is called; it ends once: charged (images returned, at most the hold),
-- failed (the provider refused; nothing generated, hold released) or released (the outcome stayed
-- unknown and the hold expired at the cost deadline, nothing charged).
CREATE TABLE image_requests (
  request_id      text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id),
  key_id          text NOT NULL REFERENCES api_keys (id),
  model           text NOT NULL,
  provider        text,
  images          integer NOT NULL CHECK (images > 0),
  images_returned integer CHECK (images_returned >= 0),
  variant         text NOT NULL,
  hold_nano       bigint NOT NULL,
  charged_nano    bigint NOT NULL DEFAULT 0,
  status          text NOT NULL CHECK (status IN ('pending', 'charged', 'failed', 'released')),
  error_code      text,
  cost_deadline   timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  resolved_at     timestamptz
);
CREATE INDEX image_requests_account ON image_requests (account_id, created_at DESC);
CREATE INDEX image_requests_pending ON image_requests (cost_deadline) WHERE status = 'pending';
