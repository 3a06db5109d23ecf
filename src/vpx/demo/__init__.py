"""The demo catalogue: seeded, realistic-looking contacts marked as demo data (origin ``demo``)."""
