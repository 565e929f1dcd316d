-- A follow-up keeps only what it adds to the conversation it continues: `parent_id` names that stored
-- conversation (null: the row holds a whole conversation, as every row written before this did), and
-- `root_id` the first row of its chain (the row itself for a whole one). A long agent loop then keeps each
-- turn once instead of the whole conversation again at every turn. A chain's rows are purged together,
-- once none of them is within its retention: a row continued by a later one stays while that one does.
ALTER TABLE stored_responses ADD COLUMN parent_id text, ADD COLUMN root_id text;
UPDATE stored_responses SET root_id = id;
ALTER TABLE stored_responses ALTER COLUMN root_id SET NOT NULL;
CREATE INDEX stored_responses_root ON stored_responses (root_id);
CREATE INDEX stored_responses_parent ON stored_responses (parent_id) WHERE parent_id IS NOT NULL;
