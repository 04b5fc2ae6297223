"""The adapter extension Model Explorer loads as `pipeline.explorer`
(its loader imports `<extension>.main`): it opens, from the app's own
page, what the chain reads (HLO text and protos, jax.export artifacts: the
chain runs with its proof, and the graphs are those of `chain_graphs`) and
the Penguin programs it writes (`.py`: run in the verifier's sandbox, the
program's graph alone)."""

from __future__ import annotations

import dataclasses
import os

from model_explorer import Adapter, AdapterMetadata, ModelExplorerGraphs

from pipeline.explorer import chain_graphs, module_graphs

# The file kinds the adapter is offered for (Model Explorer matches the
# file's extension): HLO text, XLA's serialized protos, jax.export's
# serialized artifacts, and Penguin programs.
FILE_EXTS = ["hlo", "txt", "hlotxt", "pb", "binpb", "bin", "jaxexport", "exported", "py"]


@dataclasses.dataclass
class _Json:
    """Graph JSON in the shape Model Explorer's `asdict` of a response expects."""

    label: str
    graphs: list
    graphSorting: str = "name_desc"


class ChainAdapter(Adapter):
    metadata = AdapterMetadata(
        id="hlo2penguin",
        name="hlo2penguin: an HLO module and its Penguin program",
        description="Runs hlo2penguin's chain on HLO text, an XLA proto or a jax.export artifact and shows the "
                    "HLO and the Penguin program, control and dep edges coloured by fate; opens a Penguin "
                    "program (.py) alone.",
        source_repo="",
        fileExts=FILE_EXTS,
    )

    def __init__(self):
        super().__init__()

    def convert(self, model_path: str, settings: dict) -> ModelExplorerGraphs:
        if model_path.endswith(".py"):
            from pipeline.verifier.sandbox import Sandboxed

            with open(model_path, "rb") as f, Sandboxed(f.read(), model_path) as child:
                module = child.module()
            graphs = module_graphs(module, os.path.basename(model_path))
        else:
            from pipeline.chain.steps import run

            graphs, _ = chain_graphs(run(model_path))
        return {"graphCollections": [_Json(**c) for c in graphs["graphCollections"]]}
