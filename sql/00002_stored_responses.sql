-- Responses kept for `previous_response_id` follow-ups and retrieval (the Responses style stores by
-- default, as its API does; `store: false` keeps nothing). `conversation` is the neutral form of the whole
-- exchange (earlier turns, input, output) so a follow-up works over a provider of any style; `response` is
-- the object as the client received it. Kept 30 days.
CREATE TABLE stored_responses (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts (id),
  conversation  jsonb NOT NULL,
  response      jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL DEFAULT now() + interval '30 days',
  deleted_at    timestamptz
);
CREATE INDEX stored_responses_expiry ON stored_responses (expires_at);
