"""Hand-written PyTorch training loops, as :mod:`precheck.sources.python_source` reads them.

There is no config file for a plain PyTorch loop: the source stage turns the script's
calls into these keys, each at the place in the script that sets it:

==========================  ==================================================================
``model_name_or_path``      ``from_pretrained``'s model (when the script loads one)
``torch_dtype``             the weights' dtype: ``model.half()`` / ``.bfloat16()`` /
                            ``.to(torch.bfloat16)``, else ``from_pretrained(torch_dtype=...)``,
                            else ``torch.set_default_dtype(...)``
``autocast``                ``torch.autocast(...)`` / ``torch.cuda.amp.autocast(...)``: ``enabled``
``autocast_dtype``          its ``dtype`` (default ``torch.get_autocast_dtype("cuda")``: float16)
``grad_scaler``             ``GradScaler(...)``: ``enabled``
``sharded_grad_scaler``     the scaler is FSDP's ``ShardedGradScaler`` (allows fp16 gradients)
``load_in_4bit`` ...        the model's bitsandbytes settings, as for HF recipes
``use_peft``                ``get_peft_model(...)``: adapters are trained
``distributed``             DDP / ``init_process_group``: one process per visible GPU
``tf32``                    ``torch.backends.cuda.matmul.allow_tf32 = ...`` /
                            ``torch.set_float32_matmul_precision("high")``
``fp8``                     Transformer Engine fp8 a trainer's precision plugin adds (a plugin
                            with ``fp8="hybrid"``, or a declared helper named for fp8: the
                            frameworks' ``python_precision_plugins``)
==========================  ==================================================================

The dialect never recognises a file by its keys: only the Python source names it.
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...dialects.base import Dialect, field, to_bool
from ...dtypes import parse_dtype, parse_load_dtype
from ...sources import Document


class PytorchLoop(Dialect):
    fields = (
        field("model", "model_name_or_path"),
        field("torch_dtype", "torch_dtype", convert=parse_load_dtype),
        field("amp", "autocast", convert=to_bool),
        field("amp_dtype", "autocast_dtype", convert=parse_dtype),
        field("grad_scaler", "grad_scaler", convert=to_bool),
        field("quant_compute_dtype", "bnb_4bit_compute_dtype", convert=parse_dtype),
        field("attn_implementation", "attn_implementation"),
        field("tf32", "tf32", convert=to_bool),
        field("fp8", "fp8"),
    )

    def score(self, doc: Document) -> int:
        return 0  # named by the Python source (Document.dialect), never detected

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        self.read_model_loading(doc, config)
        sharded = self.node(doc, "sharded_grad_scaler")
        if sharded is not None and to_bool(sharded.value):
            self.put(config, "fsdp", True, doc, sharded)
        distributed = self.node(doc, "distributed")
        if distributed is not None and to_bool(distributed.value):
            self.put(config, "devices", "all", doc, distributed)
