"""What a run's errors rest on: facts, or values precheck had to assume.

DESIGN.md, "Findings rest on facts": a value from a file, flag or environment, and a
framework default on a path precheck read end to end, are facts; a value known only at run
time, or a default of a training script precheck did not read, is an assumption, and a
finding resting on one is at most a warning that names it.

Rules need not spell out every premise: for each value of the run that is assumed (a
:class:`Premise`), an error is checked again with that value changed to each other value it
could have. An error that goes away under one of them rests on the assumption; one that
stays rests on facts. Rules may also list assumptions themselves (``Finding.assumptions``:
the memory rules name the training method and the device count).

Values assumed:

* a run read by a repository's own training script precheck did not read end to end (a
  TrainingArguments/TRL YAML, a launch of ``train.py``): the script decides the model's load
  dtype, whether it trains adapters, and its precision flags' defaults, so where the run's
  files leave them out the framework's defaults are assumptions;
* a value the run sets at run time (``bf16=args.bf16`` in a script, ``--bf16 $BF16`` with
  ``BF16`` not set in the shell script): precheck left it out, so the default that stands in
  for it is an assumption.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from . import resolve
from .config import TrainingConfig
from .provenance import Origin, Sourced
from .rules.base import Context, Finding, Rule, Severity
from .sources.nodes import Document

#: frameworks whose runs are read by the user's own script unless precheck read it
SCRIPT_FRAMEWORKS = ("transformers", "trl")
#: keys of a value left out as a run-time value → the TrainingConfig field it would set
_FIELDS = {
    "torch_dtype": "torch_dtype",
    "dtype": "torch_dtype",
    "bf16": "bf16",
    "fp16": "fp16",
    "use_peft": "train_type",
}
#: rules that name the training method themselves (``Finding.assumptions``)
_NAMES_METHOD = ("PC801", "PC802")


@dataclass(frozen=True, slots=True)
class Premise:
    """A value of the run that precheck assumed, the other values it could have, and what to tell the user."""

    field: str
    alternatives: tuple[Any, ...]
    assumption: str


def consumer_unread(document: Document, config: TrainingConfig) -> str | None:
    """The script that reads this run, when precheck did not read it; None when it did (a
    Python file or notebook, TRL's own CLI and scripts) or the framework's own entry point runs."""
    if config.framework not in SCRIPT_FRAMEWORKS or document.format in ("python", "notebook"):
        return None
    if document.script is not None:
        return f"`{document.script}`" + ("" if document.script_path else " (not found next to the launch)")
    if document.dialect == "trl":  # `trl sft ...`, TRL's example scripts: TRL's own defaults
        return None
    return f"the training script that reads {document.path}"


def _runtime_keys(config: TrainingConfig) -> dict[str, str]:
    """Fields whose value the run's files set only at run time → the key as written."""
    out: dict[str, str] = {}
    for note in config.notes:
        if note.kind not in ("unresolved-value", "unresolved") or not note.key:
            continue
        name = note.key.lstrip("-").replace("-", "_")
        if name in _FIELDS:
            out.setdefault(_FIELDS[name], note.key)
    return out


def premises(document: Document, config: TrainingConfig, context: Context) -> list[Premise]:
    """The assumed values of a run, each with the values it could have instead."""
    plan = context.plan
    script = consumer_unread(document, config)
    runtime = _runtime_keys(config)
    out: list[Premise] = []
    load = plan.load_dtype
    if config.torch_dtype is None and (script or "torch_dtype" in runtime):
        others = tuple(d for d in ("float32", "bfloat16", "float16") if d != load.value)
        if "torch_dtype" in runtime:
            why = f"`{runtime['torch_dtype']}` is set at run time, so precheck took {load.value} ({load.origin})"
        else:
            why = (
                f"the model loads in {load.value} ({load.origin}) only if {script}, which precheck did not read, "
                "leaves the dtype to `from_pretrained`"
            )
        out.append(Premise("torch_dtype", others, f"{why}; state it with `torch_dtype` in the run's config"))
    for flag in ("bf16", "fp16"):
        if getattr(config, flag) is not None or not (script or flag in runtime):
            continue
        if flag in runtime:
            why = f"`{runtime[flag]}` is set at run time"
        else:
            why = f"{script}, which precheck did not read, decides `{flag}`'s default"
        out.append(Premise(flag, (True, False), f"{why}; state `{flag}` in the run's config or command"))
    if config.train_type is None and config.quantization_bits is None and (script or "train_type" in runtime):
        where = f"`{runtime['train_type']}` is set at run time" if "train_type" in runtime else f"{script} decides"
        out.append(
            Premise(
                "train_type",
                ("lora",),
                f"a full fine-tune: {where} whether it trains LoRA adapters; state it (e.g. TRL's `use_peft`)",
            )
        )
    return out


def rest_on_facts(finding: Finding) -> Finding:
    """A finding that rests on an assumption is at most a warning, and says what was assumed
    (DESIGN.md, "Findings rest on facts")."""
    if not finding.assumptions:
        return finding
    said = "; ".join(finding.assumptions)
    message = f"{finding.message} [assumed: {said}]"
    if finding.severity <= Severity.WARNING:
        return replace(finding, message=message)
    note = f"a warning, not an error: it rests on {len(finding.assumptions)} assumption(s)"
    return replace(finding, severity=Severity.WARNING, message=message, note=note)


def judge(findings: list[Finding], premises_: list[Premise], context: Context, rules: Iterable[Rule]) -> list[Finding]:
    """Errors that go away when an assumed value changes rest on that assumption: a warning naming it."""
    errors = [f for f in findings if f.severity is Severity.ERROR and not f.assumptions]
    if not errors or not premises_:
        return findings
    by_code = {r.code: r for r in rules}
    contexts: dict[tuple[str, Any], Context | None] = {}

    def what_if(premise: Premise, value: Any) -> Context | None:
        key = (premise.field, value)
        if key not in contexts:
            config = replace(context.config)
            setattr(config, premise.field, Sourced(value, Origin.default("what-if")))
            try:
                plan = resolve.resolve(config, context.hardware, context.versions)
            except Exception:  # a combination the resolver refuses: the value stays a premise
                contexts[key] = None
            else:
                contexts[key] = Context(config, plan, context.hardware, context.versions)
        return contexts[key]

    def persists(finding: Finding, rule: Rule, other: Context | None) -> bool:
        if other is None:
            return False
        place = (finding.origin.path, finding.origin.line, finding.origin.column)
        try:
            return any((f.origin.path, f.origin.line, f.origin.column) == place for f in rule.check(other))
        except Exception:
            return False

    out = []
    for finding in findings:
        rule = by_code.get(finding.rule)
        if finding not in errors or rule is None:
            out.append(finding)
            continue
        assumed = tuple(
            p.assumption
            for p in premises_
            if not (p.field == "train_type" and finding.rule in _NAMES_METHOD)
            and not all(persists(finding, rule, what_if(p, value)) for value in p.alternatives)
        )
        out.append(rest_on_facts(replace(finding, assumptions=assumed)) if assumed else finding)
    return out
