-- The deposit watcher's place on each chain: the next block whose logs it reads.
CREATE TABLE chain_cursors (
  chain_id    integer PRIMARY KEY,
  next_block  bigint NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- On-chain payments still being confirmed, or credited and still inside the reorganisation window.
CREATE INDEX payments_chain_watch ON payments (created_at)
  WHERE provider = 'chain' AND state IN ('pending', 'credited');
