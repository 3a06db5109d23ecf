"""California's Delete Request and Opt-out Platform: downloading its batches, deciding each work item,
answering with a status per item (docs/compliance.md)."""
