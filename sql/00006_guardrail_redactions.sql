-- What a request's guardrail redacted, by detector ("email=2, phone=1"), never the text: shown in the
-- activity view beside the x-service-guardrail-redactions header the client got. Null when nothing was.
ALTER TABLE request_logs ADD COLUMN guardrail_redactions text;
