-- Message threads of the Messages style (its message-threads beta) are kept beside Responses-style
-- responses, under the ID of the reply a continue names: `conversation` is then the thread as Messages
-- request fields (system, tools, and the messages up to and with that reply), and `style` says which of
-- the two a row is, so that neither style's reads find the other's. Same retention as responses.
ALTER TABLE stored_responses ADD COLUMN style text NOT NULL DEFAULT 'responses';
