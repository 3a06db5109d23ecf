"""The national Do-Not-Call registry's numbers, by area code, and what they say of each phone."""
