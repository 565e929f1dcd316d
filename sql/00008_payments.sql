-- Payments: card checkouts and on-chain deposits. A payment is credited at most once: the credit's
-- ledger entry is written in the same transaction that marks the payment credited, and the provider's
-- identity of the payment (a Checkout Session id; chain, transaction hash and log index) is unique.
-- A reversal (refund, lost dispute, reorganisation) is an adjustment entry of the negative amount.
CREATE TABLE payments (
  id                 text PRIMARY KEY,
  account_id         text NOT NULL REFERENCES accounts (id),
  provider           text NOT NULL CHECK (provider IN ('stripe', 'chain')),
  external_id        text NOT NULL,
  amount_nano        bigint NOT NULL CHECK (amount_nano > 0),
  currency           text NOT NULL,
  -- pending: started or seen, not final; credited; failed: never paid; reversed: credited, then taken
  -- back; held: paid but not credited until the operator decides (a sanctions-screening hit).
  state              text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'credited', 'failed', 'reversed', 'held')),
  credit_entry_id    text UNIQUE,
  reversal_entry_id  text UNIQUE,
  detail             jsonb NOT NULL DEFAULT '{}',
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (provider, external_id)
);
CREATE INDEX payments_account_time ON payments (account_id, created_at DESC);

-- Adjustments (reversals) reach the live balance through the same once-per-entry credit call as credits;
-- the maintenance job re-applies recent ones a crash may have left out.
CREATE INDEX ledger_recent_adjustments ON ledger (created_at) WHERE kind = 'adjustment';
