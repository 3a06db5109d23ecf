"""Intent signals (issue 4): one ingestion pipeline, the D22 query, batch, purchase and signal webhooks."""
