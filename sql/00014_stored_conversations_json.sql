-- A stored conversation goes back to a provider on every follow-up, and the response is retrieved as the
-- client received it: both are kept as the text written (`json`), not re-encoded (`jsonb` orders an
-- object's keys by length, so a tool call's input came back as `{"unit", "location"}` where the model
-- wrote `{"location", "unit"}`: another prompt than the one sent before, which a provider's prompt cache
-- does not match).
ALTER TABLE stored_responses
  ALTER COLUMN conversation TYPE json USING conversation::json,
  ALTER COLUMN response TYPE json USING response::json;
