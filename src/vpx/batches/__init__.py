"""Batch reveal (D16): up to 100 contacts at once, answered at once or delivered to a webhook."""
