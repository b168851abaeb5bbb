"""Time precheck against yamllint on the same files; print seconds and ratios.

    python benchmarks/bench.py [--corpus ../shared/corpus] [--runs 5]

Measures: one small config in a cold process, the shared corpus of real configs, 1,000
generated configs, and `precheck probe`. yamllint (`pip install yamllint`) is the yardstick
for a config linter run from pre-commit; when it is missing, its columns say so.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "examples" / "configs" / "ms-swift-v100" / "fp16-false-ignored.yaml"
TEMPLATE = """model_name_or_path: Qwen/Qwen2.5-{n}B-Instruct
torch_dtype: bfloat16
output_dir: out/{n}
per_device_train_batch_size: {b}
gradient_accumulation_steps: 8
learning_rate: 2.0e-5
num_train_epochs: 1
bf16: true
gradient_checkpointing: true
logging_steps: 10
"""


def timed(cmd: list[str], runs: int) -> float:
    """Median wall time of ``runs`` runs (exit codes 0 and 1 both count as a run)."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, cwd=ROOT, check=False)
        samples.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode()[-300:]}")
    return statistics.median(samples)


def row(label: str, ours: float, theirs: float | None) -> str:
    if theirs is None:
        return f"{label:<34} precheck {ours:7.3f} s   yamllint      n/a"
    return f"{label:<34} precheck {ours:7.3f} s   yamllint {theirs:7.3f} s   ratio {ours / theirs:5.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    precheck = [sys.executable, "-m", "precheck", "--gpu", "8xH100", "--exit-zero"]
    yamllint_exe = shutil.which("yamllint") or (
        str(Path(sys.executable).with_name("yamllint")) if Path(sys.executable).with_name("yamllint").exists() else None
    )
    yamllint = [yamllint_exe, "-f", "parsable", "-d", "relaxed"] if yamllint_exe else None

    def both(label: str, paths: list[str], runs: int) -> None:
        ours = timed(precheck + paths, runs)
        theirs = timed(yamllint + paths, runs) if yamllint else None
        print(row(label, ours, theirs))

    print(f"python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d')}, runs={args.runs} (median)")
    both("one small config, cold process", [str(SMALL)], args.runs)
    corpus = Path(args.corpus)
    if corpus.is_dir():
        yaml_files = sorted(str(p) for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml"))
        both(f"corpus: {len(yaml_files)} YAML files", yaml_files, args.runs)
        print(row(f"corpus: all {sum(1 for p in corpus.rglob('*.*'))} files", timed(precheck + [str(corpus)], args.runs), None))
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(1000):
            Path(tmp, f"cfg{n:04d}.yaml").write_text(TEMPLATE.format(n=n % 72 + 1, b=n % 8 + 1))
        both("1,000 generated configs", [tmp], max(1, args.runs // 2))
    probe = timed([sys.executable, "-m", "precheck", "probe"], args.runs)
    print(f"{'precheck probe':<34} precheck {probe:7.3f} s")


if __name__ == "__main__":
    main()
