"""The suppression list checked before every reveal (D15)."""
