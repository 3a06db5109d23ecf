"""The background worker: delivers the webhook outbox and runs batch reveals (D16, D26)."""
