"""What a run's errors rest on: facts, or values precheck had to assume.

DESIGN.md, "Findings rest on facts": a value from a file, flag or environment, and a
framework default on a path precheck read end to end, are facts; a value known only at run
time, or a default of a training script precheck did not read, is an assumption, and a
finding resting on one is at most a warning that names it.

Rules need not spell out every premise: for each value of the run that is assumed (a
:class:`Premise`), an error is checked again with that value changed to each other value it
could have. An error that goes away under one of them rests on the assumption; one that
stays (the rule still fires, whatever it points at) rests on facts. Rules may also list
assumptions themselves (``Finding.assumptions``: the memory rules name the training method
and the device count).

Values assumed:

* a run read by a repository's own training script precheck did not read end to end (a
  TrainingArguments YAML, a launch of ``train.py``; a config with TRL's own keys is TRL's,
  read by ``trl sft --config`` and TRL's scripts): the script decides the model's load
  dtype, whether it trains adapters, and its precision flags' defaults, so where the run's
  files leave them out the framework's defaults are assumptions;
* a run whose config file a launch names is not there (``... train cfg.yaml``
  with no ``cfg.yaml``): the settings it would hold are unknown;
* a script that imports Unsloth and leaves ``bf16``/``fp16`` unset: Unsloth's patched
  config and trainer choose them, not TRL's defaults;
* a config checked without its launch, of a framework whose launch option replaces the
  config's mixed precision (``Traits.amp_replaced_by_launch``: xtuner's ``--deepspeed``
  replaces mmengine's ``AmpOptimWrapper``): whether the config's AMP runs is the launch's;
* a value the run sets at run time (``bf16=args.bf16`` in a script, ``--bf16 $BF16`` with
  ``BF16`` not set in the shell script): precheck left it out, so the default that stands in
  for it is an assumption.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from . import resolve
from .config import TrainingConfig
from .provenance import Origin, Sourced
from .rules.base import Context, Finding, Rule, Severity
from .sources.interpolation import INTERPOLATED
from .sources.nodes import ATTENTION_PATCH, Document

#: keys of a value left out as a run-time value → the TrainingConfig field it would set
_FIELDS = {
    "torch_dtype": "torch_dtype",
    "dtype": "torch_dtype",
    "bf16": "bf16",
    "fp16": "fp16",
    "use_peft": "train_type",
}
_UNSLOTH = re.compile(r"(?:from|import)\s+unsloth\b")
#: rules that name the training method themselves (``Finding.assumptions``)
_NAMES_METHOD = ("PC801", "PC802")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Premise:
    """A value of the run that precheck assumed, the other values it could have, and what to tell the user."""

    field: str
    alternatives: tuple[Any, ...]
    assumption: str
    #: the run as it would be otherwise, where that is more than one field's value (a launch
    #: that attaches a file): applied instead of setting ``field``
    otherwise: Callable[[TrainingConfig], TrainingConfig] | None = None
    #: warnings rest on it too (they say so; their severity stays)
    judges_warnings: bool = False


def consumer_unread(document: Document, config: TrainingConfig) -> str | None:
    """The script that reads this run, when precheck did not read it; None when it did (a
    Python file or notebook, TRL's own CLI and scripts) or the framework's own entry point runs."""
    if not config.traits.arguments_for_user_script or document.format in ("python", "notebook"):
        return None
    if document.script_keys:  # the launched script's own schema and code were read
        if document.script_own_loop and document.script is not None:
            # it builds no transformers/TRL trainer: its flags look like TrainingArguments,
            # but the HF Trainer's defaults are not the run's (DESIGN.md: a framework's
            # defaults only where its entry point runs)
            return f"`{document.script}`'s own training loop (it constructs no transformers Trainer)"
        return None
    if document.script is not None:
        return f"`{document.script}`" + ("" if document.script_path else " (not found)")
    if document.dialect == "trl" or (config.dialect == "trl" and document.format in ("yaml", "json", "toml")):
        # `trl sft ...`, TRL's example scripts, and a config written for them (TRL's own keys:
        # `dataset_name`, `packing`...; TrlParser reads it into TRL's config classes): TRL's defaults
        return None
    return "the script that reads this config"


def _runtime_keys(config: TrainingConfig) -> dict[str, str]:
    """Fields whose value the run's files set only at run time → the key as written."""
    out: dict[str, str] = {}
    for note in config.notes:
        if note.kind not in ("unresolved-value", "unresolved", INTERPOLATED) or not note.key:
            continue
        name = note.key.lstrip("-").replace("-", "_")
        if name in _FIELDS:
            out.setdefault(_FIELDS[name], note.key)
    return out


def _names_config(key: str | None) -> bool:
    """``config``, ``--config``, ``--config_file``, ``cfg``: a key that names the run's config file."""
    name = (key or "").lstrip("-").replace("-", "_").lower()
    return name in ("config", "config_file", "cfg", "configs")


@lru_cache(maxsize=8)
def _imports_unsloth(text: str) -> bool:
    """Once per file, not per run (a file of 25,000 runs; a string's hash is kept by Python)."""
    return "unsloth" in text and _UNSLOTH.search(text) is not None  # the pattern's one literal first


def premises(document: Document, config: TrainingConfig, context: Context) -> list[Premise]:
    """The assumed values of a run, each with the values it could have instead."""
    plan = context.plan
    script = consumer_unread(document, config)
    # the run's own config file (not a DeepSpeed JSON it names: the run's settings are still known)
    missing = next((n for n in config.notes if n.kind == "missing-reference" and _names_config(n.key)), None)
    if missing is not None and script is None:  # the run's config file is not there: its settings are unknown
        named = re.findall(r"`([^`]+)`", missing.message)
        script = f"`{named[1] if len(named) > 1 else missing.key}` (not found)"
    runtime = _runtime_keys(config)
    out: list[Premise] = []
    load = plan.load_dtype
    if config.torch_dtype is None and (script or "torch_dtype" in runtime):
        others = tuple(d for d in ("float32", "bfloat16", "float16") if d != load.value)
        if "torch_dtype" in runtime:
            why = f"load dtype {load.value}: `{runtime['torch_dtype']}` is set at run time"
        else:
            why = f"load dtype {load.value}, `from_pretrained`'s default, as {script} is not read"
        # a warning on the load dtype rests on it as much as an error (PC405 "gradients are
        # float16" of an open-instruct YAML whose finetune.py loads bfloat16): it names it
        out.append(Premise("torch_dtype", others, f"{why}; state `torch_dtype`", judges_warnings=script is not None))
    # Unsloth replaces TRL's trainers and configs when imported (UnslothSFTConfig: both flags
    # default to False, and its trainer picks fp16 or bf16 from the model's dtype): TRL's
    # own defaults do not hold there, and precheck does not model Unsloth's
    unsloth = document.format in ("python", "notebook") and _imports_unsloth(document.text)
    for flag, other in (("bf16", "fp16"), ("fp16", "bf16")):
        if getattr(config, flag) is not None or not (script or flag in runtime or unsloth):
            continue
        opposite = getattr(config, other)
        # both on is refused by TrainingArguments: with the other on, this one can only be off
        values = (False,) if opposite is not None and opposite.value is True else (True, False)
        if flag in runtime:
            why = f"`{runtime[flag]}` is set at run time"
        elif script is not None:
            why = f"`{flag}` at its default, as {script} is not read"
        else:
            why = f"`{flag}` at TRL's default, but Unsloth's patched config and trainer choose it"
        out.append(Premise(flag, values, f"{why}; state `{flag}`"))
    replaced_by = config.traits.amp_replaced_by_launch
    if (
        replaced_by
        and document.format == "python"
        and "deepspeed" not in config.attached
        and config.amp is not None
        and config.amp.value
    ):
        otherwise = _launched_with(config.framework)
        out.append(
            Premise(
                "amp",
                (False,) if otherwise is None else ("launched",),
                f"the config's mixed-precision optimizer wrapper runs, as when launched without `{replaced_by}` "
                f"(with it, the launch's DeepSpeed file decides the precision); check the launch line that starts it",
                otherwise,
                judges_warnings=otherwise is not None,
            )
        )
    patch = next((n for n in config.notes if n.kind == ATTENTION_PATCH), None)
    attention = config.attn_implementation
    if patch is not None and attention is not None and attention.value == "flash_attention_2":
        out.append(Premise("attn_implementation", ("sdpa",), f"{patch.message}; state `attn_implementation`"))
    if config.train_type is None and config.quantization_bits is None and (script or "train_type" in runtime):
        where = f"`{runtime['train_type']}` is set at run time" if "train_type" in runtime else f"{script} is not read"
        out.append(Premise("train_type", ("lora",), f"a full fine-tune, as {where}; state it (e.g. TRL's `use_peft`)"))
    return out


def _launched_with(framework: str) -> Callable[[TrainingConfig], TrainingConfig] | None:
    """The framework's ``launched_with`` function, if it declares one."""
    from . import frameworks

    declared = frameworks.named(framework)
    return declared.as_launched if declared is not None else None


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
    if any(p.judges_warnings for p in premises_):
        errors += [f for f in findings if f.severity is Severity.WARNING and not f.assumptions]
    if not errors or not premises_:
        return findings
    by_code = {r.code: r for r in rules}
    contexts: dict[tuple[str, Any], Context | None] = {}

    def what_if(premise: Premise, value: Any) -> Context | None:
        key = (premise.field, value)
        if key not in contexts:
            if premise.otherwise is not None:
                config = premise.otherwise(context.config)
            else:
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
        # the rule still fires (its anchor may move to the what-if value when that value is
        # now the first cause): the run is wrong whatever the assumed value is
        try:
            return any(True for _ in rule.check(other))
        except Exception:
            return False

    out = []
    for finding in findings:
        rule = by_code.get(finding.rule)
        if finding not in errors or rule is None:
            out.append(finding)
            continue
        warning = finding.severity is Severity.WARNING
        assumed = tuple(
            p.assumption
            for p in premises_
            if (p.judges_warnings or not warning)
            and not (p.field == "train_type" and finding.rule in _NAMES_METHOD)
            and not all(persists(finding, rule, what_if(p, value)) for value in p.alternatives)
        )
        out.append(rest_on_facts(replace(finding, assumptions=assumed)) if assumed else finding)
    return out


def at_run_time_values(findings: list[Finding], config: TrainingConfig) -> list[Finding]:
    """A finding at a value the run sets only at run time (an OmegaConf ``${oc.env:X,bf16}``,
    a ``${{ }}`` expression: :mod:`precheck.sources.interpolation`) rests on what precheck
    took for it: at most a warning that names it."""
    places: dict[tuple[str, int], str] = {}
    pending, seen = [config], 0
    while pending and seen < 64:
        item, seen = pending.pop(0), seen + 1
        for note in item.notes:
            if note.kind == INTERPOLATED:
                places.setdefault((note.path or item.path, note.line), note.message)
        pending.extend(item.attached.values())
    if not places:
        return findings
    out = []
    for finding in findings:
        said = [
            places[(o.path, o.line)]
            for o in (finding.origin, *finding.related)
            if o.path is not None and o.line is not None and (o.path, o.line) in places and not _placeholder(o)
        ]
        said = [m for m in dict.fromkeys(said) if m not in finding.assumptions]
        if not said:
            out.append(finding)
            continue
        fix = finding.fix
        if fix is not None and any((e.path, e.line) in places for e in fix.edits):
            # writing a constant over the interpolation would drop what the run sets: say it, do not apply it
            fix = replace(fix, edits=tuple(e for e in fix.edits if (e.path, e.line) not in places))
        judged = rest_on_facts(replace(finding, fix=fix, assumptions=tuple(said)))  # says only the new ones
        out.append(replace(judged, assumptions=(*finding.assumptions, *said)))
    return out


def _placeholder(origin: Origin) -> bool:
    """The whole file's top (line 1, column 1, no key): where a finding that rests on a default
    stands until :func:`point_at_key` places it; not the value of the key written on line 1."""
    return origin.key is None and (origin.line, origin.column) == (1, 1)


def within_schema(findings: list[Finding], document: Document) -> list[Finding]:
    """A fix that adds a flag the launched script does not define would make its parser stop
    (argparse: ``unrecognized arguments``): where the script's options are known and closed,
    such an edit is left out and the fix says to state the setting in the script instead."""
    defined = document.script_keys
    if not defined or not document.script_closed:
        return findings
    out = []
    for finding in findings:
        fix = finding.fix
        if fix is None:
            out.append(finding)
            continue
        foreign = [
            e
            for e in fix.edits
            if e.line is None
            and not e.remove
            and e.path == document.path
            and e.key.lstrip("-").replace("-", "_") not in defined
        ]
        if not foreign:
            out.append(finding)
            continue
        names = ", ".join(f"`--{e.key.lstrip('-')}`" for e in foreign)
        kept = tuple(e for e in fix.edits if e not in foreign)
        said = f"{fix.description} ({document.script or 'the script'} defines no {names}: set it in the script)"
        out.append(replace(finding, fix=replace(fix, description=said, edits=kept)))
    return out


def point_at_key(findings: list[Finding], document: Document) -> list[Finding]:
    """A finding that rests on a framework default has no key to point at: point it at the
    key that would change it (the fix's first key to add), where the user would write it —
    the launch command or call that starts the run, or the top of the config — and say the
    value is a default."""
    out = []
    for finding in findings:
        origin = finding.origin
        edits = finding.fix.edits if finding.fix else ()
        added = next((e for e in edits if e.line is None and not e.remove and e.key), None)
        if origin.key is not None or (origin.line, origin.column) != (1, 1) or added is None:
            out.append(finding)
            continue
        line, column = 1, 1
        if added.path == document.path:
            line, column = _run_start(document)
        where = Origin("file", added.path or origin.path, line, column, added.key)
        note = f"[`{added.key}` is not set: the value is a default]"
        out.append(replace(finding, origin=where, message=f"{finding.message} {note}"))
    return out


def _run_start(document: Document) -> tuple[int, int]:
    """Where the run's own settings start in its file: the launch command, the config call."""
    root = document.mapping()
    places = [
        (node.key_line or node.line, node.key_column or node.column)
        for node in root.values()
        if node.path is None and (node.key_line or node.line)
    ]
    return min(places) if places else (document.root.line or 1, document.root.column or 1)
