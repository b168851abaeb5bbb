"""The normalised, pydantic-modelled training configuration.

Dialects map each framework's keys onto these fields, keeping where every value came
from (:class:`~precheck.provenance.Sourced`). A field is None when the run's files do
not set it: defaults are applied by :mod:`precheck.resolve`, which knows each
framework's own, so that "unset" and "set to the default" stay distinguishable.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .provenance import Sourced
from .sources.nodes import SourceNote

SBool = Sourced[bool] | None
SStr = Sourced[str] | None
SDtype = Sourced[str] | None


class TrainingConfig(BaseModel):
    model_config = ConfigDict(revalidate_instances="never")

    #: the dialect that read the file ("ms-swift", "hf-trainer", ...)
    dialect: str
    #: the framework whose semantics apply (its name as a Python distribution)
    framework: str
    path: str

    # the model
    model: SStr = None
    #: dtype the model weights are loaded in (``torch_dtype``, ``backbone_dtype``...)
    torch_dtype: SDtype = None
    #: a 4-/8-bit quantised base model (QLoRA)
    quantization_bits: Sourced[int] | None = None
    #: "lora", "full", ... when the file says
    train_type: SStr = None

    # mixed-precision switches, as the framework names them
    fp16: SBool = None
    bf16: SBool = None
    tf32: SBool = None
    #: a mode string: "no" | "fp16" | "bf16" | "fp8" (accelerate, SimpleTuner)
    mixed_precision: SStr = None
    #: an on/off autocast switch with a separate dtype (H2O LLM Studio)
    amp: SBool = None
    amp_dtype: SDtype = None
    pure_bf16: SBool = None
    grad_scaler: SBool = None

    # optimisation
    optimizer: SStr = None
    gradient_precision: SStr = None
    gradient_checkpointing: SBool = None
    #: transformers 4.x TrainingArguments' AMP backend (auto | apex | cpu_amp)
    half_precision_backend: SStr = None
    max_grad_norm: Sourced[float] | None = None

    # distribution
    #: device indices the config itself assigns ("0,1"; H2O LLM Studio's environment.gpus)
    devices: SStr = None
    fsdp: SBool = None
    fsdp_mixed_precision: SBool = None

    #: environment variables the run will see (from the process or the config)
    env: dict[str, Sourced[str]] = Field(default_factory=dict)
    #: how this framework spells its precision switches ({"fp16": "use_fp16"}); a switch
    #: the framework lacks is absent, so fixes never invent keys
    flag_keys: dict[str, str] = Field(default_factory=dict)
    #: every top-level key of the file, as spelled, with where it is
    keys: dict[str, Sourced[Any]] = Field(default_factory=dict)
    #: odd but readable input (duplicate keys, YAML 1.1 booleans)
    notes: list[SourceNote] = Field(default_factory=list)
