-- Stablecoin deposit addresses: each account gets its own, derived from the operator's extended public
-- key at the next index (the gateway never holds a private key). The index comes from a sequence, so
-- concurrent first requests of different accounts never share one.
CREATE SEQUENCE deposit_address_index MINVALUE 0 START 0;

CREATE TABLE deposit_addresses (
  account_id        text PRIMARY KEY REFERENCES accounts (id),
  -- Which extended public key the address comes from (its fingerprint), and where.
  key_fingerprint   text NOT NULL,
  derivation_index  integer NOT NULL,
  address           text NOT NULL UNIQUE,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (key_fingerprint, derivation_index)
);
