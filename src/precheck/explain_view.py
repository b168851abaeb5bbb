"""``precheck explain`` for people: each run's precision flow as a small diagram, its memory
estimate as a bar against the device, the settings that were overridden and by what, and
its findings in full (the detail the check's one-line headlines leave out).

Plain text when piped (ASCII diagram, the bar in letters, one part each); on a terminal
the same picture with rich (colours, arrows, a coloured bar). :mod:`precheck.explain`
holds the data (the plan's fields) and the JSON document; :mod:`precheck.explain_memory` the
memory estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .escape import printable, shorten

if TYPE_CHECKING:
    from .engine import FileResult, Report
    from .provenance import Origin
    from .resolve.plan import PrecisionPlan
    from .rules.base import Finding

#: the flow of one training step, in order: (label, plan field)
FLOW = (
    ("load", "load_dtype"),
    ("trainable", "param_dtype"),
    ("autocast", "autocast_dtype"),
    ("gradients", "grad_dtype"),
    ("reduce", "reduce_dtype"),
    ("optimizer states", "optimizer_state_dtype"),
    ("master weights", "master_weights"),
)
#: the memory bar's width in characters, and each part's letter in plain text
BAR = 40
LETTERS = {
    "weights": "w",
    "master weights": "m",
    "gradients": "g",
    "optimizer states": "o",
    "activations": "a",
    "CUDA context": "c",
}
_COLOURS = {
    "weights": "blue",
    "master weights": "magenta",
    "gradients": "yellow",
    "optimizer states": "green",
    "activations": "cyan",
    "CUDA context": "white",
}
_DTYPE_STYLE = {"bfloat16": "magenta", "float16": "yellow", "float32": "green", "none": "dim"}


def source_text(origin: Origin) -> str:
    """Where a value came from, and the other lines it flows through (``through FILE:LINE``)."""
    if not origin.through:
        return str(origin)
    places = [f"line {line}" if path == origin.path else f"{path}:{line}" for path, line in origin.through]
    return f"{origin} through {', '.join(places)}"


def value_text(value: Any) -> str:
    """A value as shown: cut to :data:`precheck.escape.QUOTE_LIMIT` characters (a 200 KB model name)."""
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else shorten(str(value))


@dataclass
class Bar:
    """The memory estimate against one device: parts in bytes, the device's bytes."""

    parts: list[tuple[str, float]]
    total: float
    capacity: float
    device: str

    def cells(self, width: int = BAR) -> list[tuple[str, int]]:
        """(part, cells) along a bar of ``width`` cells for the larger of total and capacity."""
        scale = width / max(self.total, self.capacity, 1.0)
        out: list[tuple[str, int]] = []
        used = 0
        for name, value in self.parts:
            if value <= 0:
                continue
            cells = max(1, round(value * scale))
            out.append((name, cells))
            used += cells
        free = max(0, round(self.capacity * scale) - used)
        if free:
            out.append(("free", free))
        return out

    @property
    def percent(self) -> int:
        return round(100 * self.total / self.capacity) if self.capacity else 0


def bar_of(memory: dict[str, Any]) -> Bar:
    parts = [(name, float(value)) for name, value in memory["bytes"].items()]
    return Bar(parts, float(memory["total_bytes"]), float(memory["device_bytes"]), str(memory["device"]))


def _gib(value: float) -> str:
    return f"{value / 1024**3:.1f}"


def plain_bar(bar: Bar) -> list[str]:
    cells = bar.cells()
    inside = "".join(("." if name == "free" else LETTERS.get(name, "?")) * count for name, count in cells)
    capacity_cells = round(BAR * bar.capacity / max(bar.total, bar.capacity, 1.0))
    # over the device: the part past its end is outside the brackets
    body = f"[{inside[:capacity_cells]}]{inside[capacity_cells:]}" if len(inside) > capacity_cells else f"[{inside}]"
    legend = "  ".join(f"{LETTERS.get(n, '?')} {n} {_gib(v)} GiB" for n, v in bar.parts if v > 0)
    return [
        f"    {body}  {_gib(bar.total)} of {_gib(bar.capacity)} GiB ({bar.percent}%)",
        f"    {legend}",
    ]


def _run_title(result: FileResult) -> str:
    label = f": {result.label}" if result.label else ""
    return f"{result.path}{label} ({result.dialect})"


def _reads(result: FileResult) -> list[tuple[str, str]]:
    assert result.config is not None
    out = []
    for role, attached in result.config.attached.items():
        kind = role if role == attached.dialect else f"{role}, read as {attached.dialect}"
        if attached.found_in:
            kind += f"; {attached.found_in}"
        out.append((attached.path, kind))
    for shown in result.attached:
        if not any(a.path == shown for a in result.config.attached.values()):
            out.append((shown, "the launched code" if shown.endswith(".py") else "the model's own config"))
    return out


def _other_fields(plan: PrecisionPlan) -> dict[str, Any]:
    flow = {name for _, name in FLOW}
    return {name: item for name, item in plan.fields().items() if name not in flow}


def _finding_lines(finding: Finding) -> list[str]:
    out = [f"    {finding.origin.location()}: {finding.rule} {finding.severity} {finding.message}"]
    if finding.note:
        out.append(f"      note: {finding.note}")
    if finding.fix:
        out.append(f"      help: {finding.fix.text()}")
    return out


def runs(report: Report) -> list[FileResult]:
    """The runs to show: each file with a plan, not a file another run names."""
    return [r for r in report.files if r.plan is not None and r.config is not None and r.part_of is None]


def render_plain(report: Report) -> str:
    from .explain_memory import memory_of

    lines: list[str] = [f"hardware: {report.hardware.describe()} ({report.hardware.source})"]
    for error in report.errors:
        lines.append(str(error))
    for result in runs(report):
        assert result.plan is not None
        lines.extend(["", _run_title(result)])
        for path, kind in _reads(result):
            lines.append(f"  reads    {path} ({kind})")
        if result.versions and result.versions.known:
            for info in result.versions.known.values():
                lines.append(f"  version  {info.name} {info.version}  [{info.source}]")
        lines.append("  precision flow")
        for index, (label, name) in enumerate(FLOW):
            item = getattr(result.plan, name)
            if item is None:
                continue
            step = label if index == 0 else f" -> {label}"
            lines.append(f"    {step:<20} {value_text(item.value):<10} {source_text(item.origin)}")
        lines.append("  other settings")
        for name, item in _other_fields(result.plan).items():
            lines.append(f"    {name:<22} {value_text(item.value):<10} {source_text(item.origin)}")
        if result.plan.overrides:
            lines.append("  overridden")
            for o in result.plan.overrides:
                lines.append(
                    f"    {o.loser.origin} = {value_text(o.loser.value)}, overridden by "
                    f"{value_text(o.winner.value)} ({o.winner.origin}): {o.reason}"
                )
        left = result.unused
        if left:
            lines.append("  read, not used")
            for u in left:
                lines.append(f"    {u.path}:{u.line}" + (f" ({u.key})" if u.key else "") + f": {u.why}")
        memory = memory_of(result)
        if memory is not None:
            lines.append(f"  memory per device ({memory['device']})")
            lines.extend(plain_bar(bar_of(memory)))
            lines.append(
                f"    {memory['parameters'] / 1e9:.2f}B parameters ({memory['source']}); {'; '.join(memory['notes'])}"
            )
        if result.findings:
            lines.append("  findings")
            for finding in result.findings:
                lines.extend(_finding_lines(finding))
    return "\n".join(printable(line) for line in lines)  # a newline in a path or key stays in its line


def print_rich(report: Report, width: int | None = None) -> None:
    """The same picture on a terminal: arrows, colours and a coloured bar, every line wrapped to
    the terminal's width (``width``: another width, for tests)."""
    from rich.console import Console, Group
    from rich.markup import escape
    from rich.padding import Padding
    from rich.text import Text

    from .explain_memory import memory_of

    console = Console(highlight=False, width=width)
    console.print(f"[bold]hardware[/]: {escape(report.hardware.describe())} [dim]({report.hardware.source})[/]")
    for error in report.errors:
        console.print(f"[bold]{escape(error.location())}[/]: [red]{escape(error.message)}[/]")
    for result in runs(report):
        assert result.plan is not None
        console.print()
        console.print(Text(printable(_run_title(result)), style="bold underline"))
        for path, kind in _reads(result):
            console.print(f"  [dim]reads[/]    {escape(printable(path))} [dim]({escape(kind)})[/]")
        if result.versions and result.versions.known:
            for info in result.versions.known.values():
                console.print(
                    f"  [dim]version[/]  {escape(info.name)} {escape(info.version)}  [dim]\\[{escape(info.source)}][/]"
                )
        # each setting on one line, its source wrapped below it at the terminal's width: a
        # three-column table squeezed the source into a few characters on an 80-column terminal
        shown = [(label, getattr(result.plan, name)) for label, name in FLOW if getattr(result.plan, name) is not None]
        console.print("  [bold]precision flow[/]")
        for index, (label, item) in enumerate(shown):
            value = value_text(item.value)
            arrow = "[cyan]●[/]" if index == 0 else "[cyan]↓[/]"
            style = _DTYPE_STYLE.get(value, "bold")
            console.print(f"    {arrow} [bold]{label:<17}[/] [{style}]{escape(value)}[/]")
            console.print(Padding(Text(source_text(item.origin), style="dim"), (0, 0, 0, 8), expand=False))
        console.print("  [bold]other settings[/]")
        for name, item in _other_fields(result.plan).items():
            console.print(f"    {name:<23} {escape(value_text(item.value))}")
            console.print(Padding(Text(source_text(item.origin), style="dim"), (0, 0, 0, 8), expand=False))
        if result.plan.overrides:
            console.print("  [bold]overridden[/]")
            for o in result.plan.overrides:
                loser = f"{o.loser.origin} = {value_text(o.loser.value)}"
                console.print(
                    f"    [yellow]{escape(loser)}[/], overridden by "
                    f"[bold]{escape(value_text(o.winner.value))}[/] [dim]({escape(str(o.winner.origin))}): "
                    f"{escape(o.reason)}[/]"
                )
        left = result.unused
        if left:
            console.print("  [bold]read, not used[/]")
            for u in left:
                where = f"{u.path}:{u.line}" + (f" ({u.key})" if u.key else "")
                console.print(f"    [yellow]{escape(where)}[/] [dim]{escape(u.why)}[/]")
        memory = memory_of(result)
        if memory is not None:
            bar = bar_of(memory)
            line = Text("    ")
            capacity_cells = round(BAR * bar.capacity / max(bar.total, bar.capacity, 1.0))
            drawn = 0
            for name, count in bar.cells():
                for _ in range(count):
                    over = drawn >= capacity_cells
                    if name == "free":
                        line.append("░", style="dim")
                    else:
                        line.append("█", style="red" if over else _COLOURS.get(name, "white"))
                    drawn += 1
            colour = "red" if bar.total > bar.capacity else "yellow" if bar.percent >= 90 else "green"
            line.append(f"  {_gib(bar.total)} of {_gib(bar.capacity)} GiB ({bar.percent}%)", style=colour)
            legend = Text("    ")
            for part, size in bar.parts:
                if size > 0:
                    legend.append("█ ", style=_COLOURS.get(part, "white"))
                    legend.append(f"{part} {_gib(size)} GiB  ")
            notes = (
                f"    {memory['parameters'] / 1e9:.2f}B parameters ({memory['source']}); {'; '.join(memory['notes'])}"
            )
            console.print(f"  [bold]memory per device[/] ({escape(str(memory['device']))})")
            console.print(Group(line, legend, Text(notes, style="dim")))
        if result.findings:
            console.print("  [bold]findings[/]")
            for finding in result.findings:
                for index, text in enumerate(_finding_lines(finding)):
                    console.print(Text(text, style="" if index == 0 else "dim"))
