"""Auto-buy (D24): rules that buy the contacts of newly ingested signals, within budget, cap and balance."""
