"""The demo: a seeded catalogue of realistic-looking, self-consistent contacts marked as demo data
(origin ``demo``), a month of intent signals about them made through the ingestion pipeline, and a
live feed of a few more a minute."""
