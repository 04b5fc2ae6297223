"""Where HLO with control edges comes from: `from_jax`, `from_export`,
`from_dump_dir` (also importable from `pipeline` itself). The same objects
as `pipeline.reading.capture`, `pipeline.reading.dumps` and
`pipeline.reading.text`, kept here because users' code imports them from
this path."""

from pipeline.reading.capture import from_dump_dir, from_export, from_jax
from pipeline.reading.dumps import Captured, CapturedModule
from pipeline.reading.text import UnreadableInput

__all__ = ["Captured", "CapturedModule", "UnreadableInput", "from_dump_dir", "from_export", "from_jax"]
