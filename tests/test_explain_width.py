"""``precheck explain`` on a terminal wraps to its width (issue 32: at 80 columns the source
column had shrunk to five characters); piped, it stays plain, one line per setting."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import precheck
from precheck.explain_view import print_rich, render_plain

CONFIG = "tests/fixtures/golden/explain/train.yaml"


def _terminal(width: int) -> list[str]:
    report = precheck.check([CONFIG], hardware=["A100"])
    out = io.StringIO()
    with redirect_stdout(out):
        print_rich(report, width=width)
    return out.getvalue().splitlines()


def test_every_line_fits_an_80_column_terminal_and_no_source_is_cut() -> None:
    lines = _terminal(80)
    assert max(len(line) for line in lines) <= 80
    report = precheck.check([CONFIG], hardware=["A100"])
    (result,) = [r for r in report.files if r.plan is not None]
    text = " ".join(" ".join(line.split()) for line in lines)
    for name in ("param_dtype", "reduce_dtype", "optimizer_state_dtype"):
        source = " ".join(str(getattr(result.plan, name).origin).split())
        assert source in text, name  # whole, wrapped at spaces, never cut to a few characters


def test_the_label_and_value_start_each_setting() -> None:
    lines = _terminal(80)
    assert any(re.match(r"    ↓ trainable +bfloat16$", line.rstrip()) for line in lines)
    assert any(re.match(r"    sharding +ZeRO-2$", line.rstrip()) for line in lines)


def test_piped_it_is_plain_one_line_per_setting() -> None:
    report = precheck.check([CONFIG], hardware=["A100"])
    plain = render_plain(report).splitlines()
    assert any(line.startswith("     -> trainable        bfloat16   DeepSpeed") for line in plain)
    assert not any("\x1b[" in line or "↓" in line for line in plain)
