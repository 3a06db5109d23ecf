"""CSV exports (D30): revealed contacts and signal queries, streamed in constant memory."""
