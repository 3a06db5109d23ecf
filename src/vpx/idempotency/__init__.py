"""Idempotency keys for POST requests that spend or create (D12)."""
