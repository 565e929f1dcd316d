-- People and their access: dashboard links and sessions, e-mail and wallet sign-in, the free chat trial,
-- credit alerts, support tickets, and the usage rollups the dashboard reads.
-- Every secret is stored as its sha256 only (bytea, 32 bytes).

ALTER TABLE accounts
  -- The permanent dashboard link of an accountless account (it survives key rotation and claiming).
  ADD COLUMN dashboard_link_hash bytea UNIQUE CHECK (length(dashboard_link_hash) = 32),
  ADD COLUMN suspended_at timestamptz,
  -- Credit alert: fires once when the available balance falls below the threshold, re-arms above it.
  ADD COLUMN alert_threshold_nano bigint CHECK (alert_threshold_nano > 0),
  ADD COLUMN alert_armed boolean NOT NULL DEFAULT true,
  ADD COLUMN alert_email boolean NOT NULL DEFAULT true,
  ADD COLUMN alert_push boolean NOT NULL DEFAULT true,
  -- Free chat messages of the dashboard playground used so far.
  ADD COLUMN trial_messages_used integer NOT NULL DEFAULT 0 CHECK (trial_messages_used >= 0);

-- A browser session, in an HttpOnly cookie. A link session (user_id NULL) acts for the accountless account
-- whose dashboard link opened it; a user session acts for one account the user is a member of.
CREATE TABLE sessions (
  token_hash    bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  account_id    text NOT NULL REFERENCES accounts (id),
  user_id       text REFERENCES users (id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- Magic links, single use: sign-in, claiming an accountless account, or joining a team.
CREATE TABLE email_tokens (
  token_hash   bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  email        text NOT NULL,
  purpose      text NOT NULL CHECK (purpose IN ('sign_in', 'claim', 'invite')),
  account_id   text REFERENCES accounts (id),
  role         text CHECK (role IN ('admin', 'member')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  consumed_at  timestamptz
);
CREATE INDEX email_tokens_expiry ON email_tokens (expires_at);

-- Sign-In with Ethereum nonces, single use.
CREATE TABLE wallet_nonces (
  nonce       text PRIMARY KEY,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);

-- Proof-of-work challenges already spent, kept until they expire (a solution is single use).
CREATE TABLE spent_challenges (
  signature   text PRIMARY KEY,
  expires_at  timestamptz NOT NULL
);

-- Browser push subscriptions for credit alerts.
CREATE TABLE push_subscriptions (
  endpoint    text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  user_id     text REFERENCES users (id),
  p256dh      text NOT NULL,
  auth        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX push_subscriptions_account ON push_subscriptions (account_id);

CREATE TABLE support_tickets (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  user_id     text REFERENCES users (id),
  subject     text NOT NULL,
  request_id  text,
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'closed')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX support_tickets_account ON support_tickets (account_id, created_at DESC);
CREATE INDEX support_tickets_status ON support_tickets (status, updated_at);

CREATE TABLE support_messages (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  ticket_id   text NOT NULL REFERENCES support_tickets (id),
  author      text NOT NULL CHECK (author IN ('customer', 'operator')),
  body        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX support_messages_ticket ON support_messages (ticket_id, id);

-- Usage per account, hour, key, model and status class, kept by the ledger writer as it writes request
-- logs; the dashboard's usage and activity read these, never the raw request log.
CREATE TABLE usage_hourly (
  account_id      text NOT NULL,
  hour            timestamptz NOT NULL,
  key_id          text NOT NULL,
  model           text NOT NULL,
  requests        integer NOT NULL DEFAULT 0,
  errors          integer NOT NULL DEFAULT 0,
  input_tokens    bigint NOT NULL DEFAULT 0,
  output_tokens   bigint NOT NULL DEFAULT 0,
  cost_nano       bigint NOT NULL DEFAULT 0,
  charged_nano    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, hour, key_id, model)
);

-- Accountless setup: when the owner confirmed having saved both secrets (the key and the dashboard link);
-- the top-up step is offered only after it (an accountless account has no recovery).
ALTER TABLE accounts ADD COLUMN secrets_confirmed_at timestamptz;

-- Pending team invites of an account (the team page lists them).
CREATE INDEX email_tokens_account ON email_tokens (account_id) WHERE account_id IS NOT NULL;

-- Suspension: suspended_reason is the cause (chargeback, sanctions, abuse, operator), this the free-text note.
ALTER TABLE accounts ADD COLUMN suspended_note text;

-- The dashboard playground's key of the account (named "Playground"): paid and free playground chat run
-- through the gateway as this key, so they are limited, charged and logged like any request. Its secret is
-- never kept: only the service uses it, in process. Replaced when revoked or rotated out.
ALTER TABLE accounts ADD COLUMN playground_key_id text REFERENCES api_keys (id);
