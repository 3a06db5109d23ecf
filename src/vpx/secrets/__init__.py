"""Customer secrets — provider keys (D32), mailbox passwords (D34), webhook signing secrets — kept
encrypted at rest: one box (MultiFernet over the service's keys), one list of the columns that hold
them, one rotation. No response, log line or column ever holds one in clear."""

from vpx.secrets.box import SecretBox, SecretsUnavailable, generate_key, is_sealed, load_box

__all__ = ["SecretBox", "SecretsUnavailable", "generate_key", "is_sealed", "load_box"]
