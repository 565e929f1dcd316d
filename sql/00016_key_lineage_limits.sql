-- A key and the keys it was rotated from share one set of limits: `limits_key_id` names the first key of
-- the rotation lineage (the key itself for a key never rotated in), and the admission store counts rates,
-- concurrency and spend under it. Before, a rotation gave the new key fresh spend windows while the old
-- key kept working through its grace, so rotating again and again multiplied the daily cap.
ALTER TABLE api_keys ADD COLUMN limits_key_id text REFERENCES api_keys (id);

WITH RECURSIVE lineage AS (
  SELECT k.id, k.id AS root FROM api_keys k
  WHERE NOT EXISTS (SELECT 1 FROM api_keys p WHERE p.replaced_by = k.id)
  UNION ALL
  SELECT next.id, lineage.root FROM lineage
  JOIN api_keys current ON current.id = lineage.id
  JOIN api_keys next ON next.id = current.replaced_by
)
UPDATE api_keys SET limits_key_id = lineage.root FROM lineage WHERE api_keys.id = lineage.id;

-- A key inserted without one is the first of its lineage.
CREATE FUNCTION key_limits_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.limits_key_id := coalesce(NEW.limits_key_id, NEW.id);
  RETURN NEW;
END
$$;
CREATE TRIGGER api_keys_limits_default BEFORE INSERT ON api_keys
  FOR EACH ROW EXECUTE FUNCTION key_limits_default();

ALTER TABLE api_keys ALTER COLUMN limits_key_id SET NOT NULL;
CREATE INDEX api_keys_limits ON api_keys (limits_key_id);
