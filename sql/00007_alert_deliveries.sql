-- Credit-alert deliveries, an outbox: written with the firing (one row per e-mail recipient and push
-- subscription), marked sent only once the mail server accepted the message or the push service took it,
-- retried with growing pauses, and failed after the last attempt, which the dashboard shows.
CREATE TABLE alert_deliveries (
  id               bigserial PRIMARY KEY,
  account_id       text NOT NULL REFERENCES accounts (id),
  channel          text NOT NULL CHECK (channel IN ('email', 'push')),
  -- The e-mail address, or the push subscription's endpoint.
  recipient        text NOT NULL,
  -- {subject, text} for a mail, {payload} for a push.
  message          jsonb NOT NULL,
  state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX alert_deliveries_account ON alert_deliveries (account_id, created_at DESC);
