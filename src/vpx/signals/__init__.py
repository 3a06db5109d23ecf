"""Intent signals: one ingestion pipeline, the D22 query, batch, purchase and signal webhooks."""
