"""What a stdio client pays for being relayed to the process that owns the vault (issue 63, F3):
the latency of `vault_read_note` and `vault_search` through the owner's own stdio session and
through a second `quire serve` attached to it over `owner.sock`, calls alternated between the two.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/attached_stdio.py [--calls N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
from test_shared_owner import RawStdio  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    binary = Path(os.environ.get("QUIRE_BIN", "target/release/quire")).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault = root / "vault"
        (vault / "Notes").mkdir(parents=True)
        for i in range(500):
            (vault / "Notes" / f"n{i:03}.md").write_text(f"# Note {i}\n\n" + "some words here. " * 200)
        env = {"PATH": os.environ.get("PATH", ""), "XDG_STATE_HOME": str(root / "state"),
               "XDG_DATA_HOME": str(root / "data"), "XDG_CONFIG_HOME": str(root / "config"),
               "XDG_CACHE_HOME": str(root / "cache")}
        owner = RawStdio(binary, vault, env, root / "owner.log")
        owner.initialize()
        attached = RawStdio(binary, vault, env, root / "attached.log")
        attached.initialize()
        assert attached.open_state_files() == [], "the second process opened its own state"
        for tool, arguments in [("vault_read_note", {"path": "Notes/n042.md"}),
                                ("vault_search", {"query": "words", "limit": 5})]:
            times = {"owner": [], "attached": []}
            for _ in range(args.calls):
                for name, process in (("owner", owner), ("attached", attached)):
                    started = time.perf_counter()
                    is_error, _, text = process.call(tool, arguments)
                    times[name].append((time.perf_counter() - started) * 1000)
                    assert not is_error, text
            for name, samples in times.items():
                samples.sort()
                print(f"{tool:16} {name:9} p50 {statistics.median(samples):6.2f} ms   "
                      f"p99 {samples[int(len(samples) * 0.99) - 1]:6.2f} ms   ({len(samples)} calls)")
        attached.close()
        owner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
