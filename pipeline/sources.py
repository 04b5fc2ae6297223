"""Where HLO with control edges comes from: `from_jax`, `from_export`,
`from_dump_dir` (also importable from `pipeline` itself). The same objects
as `pipeline.chain.sources`, kept here because users' code imports them from
this path."""

from pipeline.chain.sources import (Captured, CapturedModule, UnreadableInput, from_dump_dir, from_export,
                                    from_jax)

__all__ = ["Captured", "CapturedModule", "UnreadableInput", "from_dump_dir", "from_export", "from_jax"]
