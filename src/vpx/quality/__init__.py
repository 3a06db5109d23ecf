"""Data you can trust: buyers' reports on wrong fields, the refunds the rules pay for them, the
``contact.corrected`` events that tell past buyers, and the quality figures operators read."""
