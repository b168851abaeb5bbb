"""Time precheck against the config checkers a pre-commit hook would run instead, on the same files.

    python benchmarks/bench.py [--corpus ../shared/corpus] [--projects ../shared/projects] [--runs 5]

In one run, on the same files: one small config in a cold process, the shared corpus of
real configs, the real repositories (scripts, notebooks, shell scripts and configs) against
the parse floor, 1,000 generated configs (and memory at 10,000), an 11 MB YAML file against
PyYAML's C loader, and ``precheck probe``. The yardsticks (``pip install -e ".[bench]"``):

- yamllint (``-d relaxed``): the YAML linter of every pre-commit config, over the YAML files;
- check-jsonschema against a trivial schema (``{"type": "object"}``): the config validator
  of pre-commit and CI (it has no schema for training configs, so this times its reading of
  every YAML and JSON file, the least it does);
- the parse floor: a process that only parses the files precheck reads in a folder
  (``ast.parse`` for Python, ``json.loads`` for JSON and notebooks, PyYAML's C loader for
  YAML, ``tomllib`` for TOML, a plain read for shell scripts and the rest): what reading
  them costs at least, before any check;
- PyYAML's C loader (``yaml.load(text, Loader=yaml.CSafeLoader)``) on one large YAML file.

A tool that is not installed gets ``n/a``. Each timing is the median of ``--runs`` runs of a
new process (exit codes 0 and 1 both count); ``peak`` is that process's maximum resident
set (``wait4``'s ``ru_maxrss``; Unix only). The real repositories and the large file also
show the CPU time (user + system) of each, steadier than wall time where other jobs share
the machine. Every process runs with bytecode cached, as
after ``pip install`` (which compiles it): precheck checked out in editable mode with
``PYTHONDONTWRITEBYTECODE=1`` would compile its ~130 modules on every start and time that.
Memory must stay flat as the number of files grows: 1,000 and 10,000 generated configs.
The real repositories and the large file are timed best of ``--best`` runs (3), interleaved.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
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
#: the parse floor: parses each file named in the list file ``sys.argv[1]`` as precheck's readers would
FLOOR = """
import ast, json, sys, tomllib, warnings
import yaml
warnings.simplefilter("ignore")
for name in open(sys.argv[1], encoding="utf-8").read().splitlines():
    try:
        with open(name, "rb") as handle:
            text = handle.read().decode("utf-8-sig")
        suffix = name.rsplit(".", 1)[-1].lower()
        if suffix == "py":
            ast.parse(text)
        elif suffix in ("json", "ipynb"):
            json.loads(text)
        elif suffix in ("yaml", "yml"):
            list(yaml.load_all(text, Loader=yaml.CSafeLoader))
        elif suffix == "toml":
            tomllib.loads(text)
    except Exception:
        pass
"""
#: PyYAML's C loader on the file ``sys.argv[1]``
C_LOADER = "import sys, yaml; yaml.load(open(sys.argv[1], encoding='utf-8').read(), Loader=yaml.CSafeLoader)"
#: keys of the large YAML file: 600,000 plain scalars, 11.4 MB (under the 16 MiB size limit)
LARGE_KEYS = 600_000
TRIVIAL_SCHEMA = '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}\n'
MIB = 1024 * 1024


@dataclass
class Timing:
    seconds: float
    peak: int | None  # bytes
    #: user + system CPU time (None where ``wait4`` is missing): steadier than wall time on a busy machine
    cpu: float | None = None


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, int | None, float | None]:
    """Wall time, peak RSS and CPU time of one process; exit codes 0 and 1 count, anything else stops."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT, env=env)
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            # ru_maxrss: KiB on Linux, bytes on macOS
            peak: int | None = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
            cpu: float | None = usage.ru_utime + usage.ru_stime
        else:  # pragma: no cover - Windows
            process.wait()
            seconds, peak, cpu = time.perf_counter() - start, None, None
        if process.returncode not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)[:200]} exited {process.returncode}: {err.read().decode()[-400:]}")
    return seconds, peak, cpu


def timed(cmd: list[str], runs: int, env: dict[str, str]) -> Timing:
    return compared({"": cmd}, runs, env)[""]


def compared(cmds: dict[str, list[str]], runs: int, env: dict[str, str], best: bool = False) -> dict[str, Timing]:
    """Median (``best``: least) time and peak of each command, their runs interleaved
    (A B A B...): a load that comes and goes on the machine weighs on each alike."""
    samples: dict[str, list[tuple[float, int | None, float | None]]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, cmd in cmds.items():
            samples[label].append(run_once(cmd, env))
    out = {}
    pick = min if best else statistics.median
    for label, taken in samples.items():
        peaks = [p for _, p, _ in taken if p is not None]
        cpus = [c for _, _, c in taken if c is not None]
        out[label] = Timing(pick([s for s, _, _ in taken]), max(peaks) if peaks else None, pick(cpus) if cpus else None)
    return out


def show(label: str, timing: Timing | None, ours: Timing | None = None, target: str = "") -> str:
    if timing is None:
        return f"  {label:<17} n/a (not installed)"
    peak = f"peak {timing.peak / MIB:6.1f} MiB" if timing.peak is not None else "peak      n/a"
    line = f"  {label:<17} {timing.seconds:7.3f} s   {peak}"
    if ours is not None and timing is not ours:
        ratio = ours.seconds / timing.seconds
        faster = f"{1 / ratio:.1f}x faster" if ratio < 1 else f"{ratio:.2f}x slower"
        line += f"   precheck/{label} {ratio:5.2f}x ({faster})"
        if target:
            line += f"   target {target}"
    return line


def cpu_line(ours: Timing, other: Timing, label: str) -> str:
    """The CPU times (user + system, least of the runs) and their ratio."""
    if ours.cpu is None or other.cpu is None:
        return "  CPU time n/a"
    return (
        f"  CPU time (user + system): precheck {ours.cpu:.3f} s, {label} {other.cpu:.3f} s: "
        f"precheck/{label} {ours.cpu / other.cpu:.2f}x"
    )


def tool(name: str) -> str | None:
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else shutil.which(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    parser.add_argument("--projects", default=str(ROOT.parent / "shared" / "projects"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--only", default="", help="comma-separated sections: small,corpus,repo,projects,large,many,probe"
    )
    parser.add_argument("--best", type=int, default=3, help="runs of the real repositories and the large file")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))

    def want(section: str) -> bool:
        return not only or section in only

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CUDA_")}
    cache = tempfile.TemporaryDirectory(prefix="precheck-bench-pyc-")
    env["PYTHONPYCACHEPREFIX"] = cache.name
    precheck = [sys.executable, "-m", "precheck", "--gpu", "8xH100", "--exit-zero"]
    yamllint_exe, jsonschema_exe = tool("yamllint"), tool("check-jsonschema")
    schema = Path(cache.name, "object.schema.json")
    schema.write_text(TRIVIAL_SCHEMA)

    def against(
        runs: int, ours: list[str], yamllint: list[str] | None = None, jsonschema: list[str] | None = None
    ) -> dict[str, Timing]:
        """precheck on ``ours``, yamllint and check-jsonschema on theirs (when given), interleaved."""
        cmds = {"precheck": [*precheck, *ours]}
        if yamllint is not None and yamllint_exe:
            cmds["yamllint"] = [yamllint_exe, "-f", "parsable", "-d", "relaxed", *yamllint]
        if jsonschema is not None and jsonschema_exe:
            cmds["check-jsonschema"] = [jsonschema_exe, "--schemafile", str(schema), *jsonschema]
        return compared(cmds, runs, env)

    for warm in ([*precheck, str(SMALL)], [sys.executable, "-m", "precheck", "probe"]):
        run_once(warm, env)  # compile and cache the bytecode once, as pip install does
    cpus = os.cpu_count()
    print(
        f"precheck benchmark, {time.strftime('%Y-%m-%d')}: Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {cpus} CPU{'s' if cpus != 1 else ''}; "
        f"median of {args.runs} runs; bytecode cached as after pip install; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )

    if want("small"):
        print(f"one small config, cold process, {3 * args.runs} runs ({SMALL.relative_to(ROOT)})")
        got = against(3 * args.runs, [str(SMALL)], [str(SMALL)], [str(SMALL)])  # short: more runs steady the median
        ours = got["precheck"]
        print(show("precheck", ours))
        print(show("yamllint", got.get("yamllint"), ours, "<= 1.5x"))
        print(show("check-jsonschema", got.get("check-jsonschema"), ours))

    corpus = Path(args.corpus)
    if not want("corpus"):
        pass
    elif corpus.is_dir():
        files = sorted(p for p in corpus.rglob("*") if p.is_file())
        yaml_files = [str(p) for p in files if p.suffix in (".yaml", ".yml")]
        data_files = [str(p) for p in files if p.suffix in (".yaml", ".yml", ".json")]
        print(f"corpus: the {len(yaml_files)} YAML files of {corpus}")
        got = against(args.runs, yaml_files, yamllint=yaml_files)
        ours = got["precheck"]
        print(show("precheck", ours))
        print(show("yamllint", got.get("yamllint"), ours, "<= 0.33x (3x faster)"))
        print(f"corpus: its {len(data_files)} YAML and JSON files")
        got = against(args.runs, data_files, jsonschema=data_files)
        ours = got["precheck"]
        print(show("precheck", ours))
        print(show("check-jsonschema", got.get("check-jsonschema"), ours))
        print(f"corpus: the folder, {len(files)} files (precheck finds the configs)")
        print(show("precheck", timed([*precheck, str(corpus)], args.runs, env)))
    else:
        print(f"corpus: {corpus} not found (--corpus PATH)")

    if want("repo"):
        with tempfile.TemporaryDirectory() as tmp:
            in_a_repository(Path(tmp), corpus, args.runs, against)

    projects = Path(args.projects)
    if not want("projects"):
        pass
    elif projects.is_dir():
        from precheck.discovery import iter_files

        read = [str(file) for file, _, _ in iter_files([str(projects)])]
        listing = Path(cache.name, "floor-files.txt")
        listing.write_text("\n".join(read) + "\n", encoding="utf-8")
        print(f"real repositories: the {len(read)} files precheck reads in {projects}, best of {args.best}")
        got = compared(
            {
                "precheck": [sys.executable, "-m", "precheck", "--gpu", "A100", "--format", "json", str(projects)],
                "parse floor": [sys.executable, "-c", FLOOR, str(listing)],
            },
            args.best,
            env,
            best=True,
        )
        ours, floor = got["precheck"], got["parse floor"]
        print(show("precheck", ours))
        print(show("parse floor", floor, ours, "<= 3x"))
        print(cpu_line(ours, floor, "parse floor"))
    else:
        print(f"real repositories: {projects} not found (--projects PATH)")

    with tempfile.TemporaryDirectory() as tmp:
        if want("large"):
            large_file(Path(tmp, "large.yaml"), args.best, precheck, env)
        if want("many"):
            many_files(Path(tmp), args.runs, against, precheck, env)

    if want("probe"):
        print("precheck probe (this machine's GPUs)")
        print(show("precheck", timed([sys.executable, "-m", "precheck", "probe"], args.runs, env)))
    cache.cleanup()


#: files of the generated git repository (the corpus, when given, is part of them)
REPO_FILES = 2400
DS_ZERO2 = (
    '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto"}\n'
)
TRAIN_NAMING_DS = TEMPLATE.format(n=7, b=4) + "deepspeed: configs/ds_zero2.json\n"


def git_repository(root: Path, corpus: Path) -> list[Path]:
    """A git repository of :data:`REPO_FILES` files, as a training project's: its code (Python
    modules), documentation, CI and data files, configs, one DeepSpeed file and the config that
    names it, and the corpus (when there) under ``corpus/``; every file added to the index.
    The corpus files in the repository."""
    root.mkdir()
    (root / "configs").mkdir()
    (root / "configs" / "ds_zero2.json").write_text(DS_ZERO2)
    (root / "configs" / "train.yaml").write_text(TRAIN_NAMING_DS)
    copied = []
    if corpus.is_dir():
        shutil.copytree(corpus, root / "corpus")
        copied = sorted(p for p in (root / "corpus").rglob("*") if p.is_file())
    count = len(copied) + 2
    kinds = [
        (
            "src/pkg/mod{n}.py",
            "import torch\n\n\ndef step{n}(model, batch):\n    return model(**batch).loss * {n}\n" * 8,
        ),
        ("docs/page{n}.md", "# Page {n}\n\nHow to train the model, with `bf16: true` and DeepSpeed ZeRO.\n" * 10),
        ("tests/test_mod{n}.py", "def test_{n}():\n    assert {n} == {n}\n" * 6),
        (".github/workflows/ci{n}.yml", "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"),
        ("data/sample{n}.json", '{{"id": {n}, "text": "an example sentence for the tokenizer"}}\n'),
        ("charts/app/templates/cm{n}.yaml", "kind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-{n}\n"),
        ("notes/run{n}.txt", "learning rate sweep {n}: 1e-5 2e-5 3e-5\n"),
    ]
    n = 0
    while count < REPO_FILES:
        name, text = kinds[n % len(kinds)]
        path = root / name.format(n=n)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(n=n))
        count += 1
        n += 1
    (root / "charts" / "app" / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    git = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=git)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=git)
    return copied


def in_a_repository(tmp: Path, corpus: Path, runs: int, against: Callable[..., dict[str, Timing]]) -> None:
    """What a pre-commit hook pays inside a real repository: one staged DeepSpeed file (the
    configs that name it are searched for), and the corpus's files named on the command line."""
    if shutil.which("git") is None:
        print("in a git repository: git not found")
        return
    root = tmp / "repo"
    copied = git_repository(root, corpus)
    ds = str(root / "configs" / "ds_zero2.json")
    print(f"in a {REPO_FILES:,}-file git repository: one staged DeepSpeed file, cold process, {3 * runs} runs")
    got = against(3 * runs, [ds], [ds])
    ours = got["precheck"]
    print(show("precheck", ours))
    print(show("yamllint", got.get("yamllint"), ours, "<= 1.5x"))
    if "yamllint" in got:
        print(cpu_line(ours, got["yamllint"], "yamllint"))
    if copied:
        named = [str(p) for p in copied if p.suffix in (".yaml", ".yml", ".json")]
        print(f"in a {REPO_FILES:,}-file git repository: the corpus's {len(named)} files named on the command line")
        got = against(runs, named, named)
        ours = got["precheck"]
        print(show("precheck", ours))
        print(show("yamllint", got.get("yamllint"), ours, "<= 0.33x (3x faster)"))
        if "yamllint" in got:
            print(cpu_line(ours, got["yamllint"], "yamllint"))


def large_file(large: Path, best: int, precheck: list[str], env: dict[str, str]) -> None:
    """precheck and PyYAML's C loader on one large YAML file of plain keys: time and memory."""
    with large.open("w", encoding="utf-8") as out:
        out.writelines(f"key{n:06d}: v{n:06d}\n" for n in range(LARGE_KEYS))
    print(f"one large YAML file: {LARGE_KEYS:,} plain keys, {large.stat().st_size / 1e6:.1f} MB, best of {best}")
    got = compared(
        {"precheck": [*precheck, str(large)], "C loader": [sys.executable, "-c", C_LOADER, str(large)]},
        best,
        env,
        best=True,
    )
    ours, loader = got["precheck"], got["C loader"]
    print(show("precheck", ours))
    print(show("C loader", loader, ours, "<= 2x"))
    print(cpu_line(ours, loader, "C loader"))
    if ours.peak is not None and loader.peak is not None:
        print(f"  peak memory precheck/C loader {ours.peak / loader.peak:.2f}x   target <= 2x")
    large.unlink()


def many_files(
    tmp: Path,
    runs: int,
    against: Callable[..., dict[str, Timing]],
    precheck: list[str],
    env: dict[str, str],
) -> None:
    """1,000 generated configs against the other tools, and memory at 10,000."""
    many = Path(tmp, "1000")
    more = Path(tmp, "10000")
    for folder, count in ((many, 1000), (more, 10000)):
        folder.mkdir()
        for n in range(count):
            Path(folder, f"cfg{n:05d}.yaml").write_text(TEMPLATE.format(n=n % 72 + 1, b=n % 8 + 1))
    runs = max(3, runs // 2) if runs >= 3 else runs
    print("1,000 generated configs (a folder; check-jsonschema is given the 1,000 file names)")
    got = against(runs, [str(many)], [str(many)], sorted(str(p) for p in many.iterdir()))
    ours = got["precheck"]
    print(show("precheck", ours) + "   target < 3 s")
    print(show("yamllint", got.get("yamllint"), ours))
    print(show("check-jsonschema", got.get("check-jsonschema"), ours))
    print("memory as the number of files grows: 10,000 generated configs")
    larger = timed([*precheck, str(more)], 1, env)
    print(show("precheck", larger))
    if ours.peak is not None and larger.peak is not None:
        per_file = (larger.peak - ours.peak) / 9000
        print(
            f"  peak {ours.peak / MIB:.1f} MiB for 1,000 files, {larger.peak / MIB:.1f} MiB for 10,000: "
            f"{per_file / 1024:+.2f} KiB per extra file"
        )


if __name__ == "__main__":
    main()
