"""Signal sources that read published files and feed the one ingest pipeline."""
