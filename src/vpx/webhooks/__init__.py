"""Webhooks: subscriptions, signed payloads, the outbox every domain writes events to (D25, D26, D29)."""
