"""The chain: its steps (links #1-#4 and the check) run in order on one
`Work`, its options, its result, and which link an edge was lost in."""
