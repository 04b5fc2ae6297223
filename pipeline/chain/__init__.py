"""The chain: its steps (links #1-#4 and the proof), each naming what it
takes and gives, run in order (`steps`), the checks of what each link hands
on (`link_checks`), its options, its result, and which link an edge was lost
in (`blame`)."""
