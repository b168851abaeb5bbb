import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import precheck.frameworks  # noqa: F401  (fills the registries lower stages read, as the CLI does)

sys.path.insert(0, str(Path(__file__).parent))

#: what the ``[hf]`` extra brings; tests marked ``hf`` need all of it
HF_EXTRA = ("torch", "transformers", "accelerate")
#: the corpus and real repositories beside a development checkout (not part of the repository):
#: tests marked ``shared`` need them, and skip, with the reason, in a clone with nothing beside it
SHARED = Path(__file__).resolve().parents[2] / "shared"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``hf`` skip, with the reason, where the ``[hf]`` extra is not installed
    (the README's test command installs only ``[test]``; .ci/run's second phase adds ``[hf]``);
    tests marked ``shared`` where ``../shared`` is not beside the checkout (a user's clone)."""
    if not SHARED.is_dir():
        away = pytest.mark.skip(reason=f"needs {SHARED} (the shared corpus and projects), not beside this checkout")
        for item in items:
            if "shared" in item.keywords:
                item.add_marker(away)
    missing = [name for name in HF_EXTRA if importlib.util.find_spec(name) is None]
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"needs the [hf] extra ({', '.join(missing)} not installed): pip install -e '.[hf]'")
    for item in items:
        if "hf" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_folders_checked() -> Iterator[None]:
    """Each test starts with no run's boundary (precheck.paths.check_within) left over."""
    from precheck.paths import check_anywhere

    check_anywhere()
    yield
    check_anywhere()
