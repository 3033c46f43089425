#!/usr/bin/env python3
"""Create the Python SDK virtual environments used by the interop tests.

    python3 interop/setup_venvs.py            # both venvs
    python3 interop/setup_venvs.py sdk1       # only .venv/sdk1
    python3 interop/setup_venvs.py --force    # rebuild even if up to date

Creates `<repo>/.venv/sdk1` (a2a-sdk 1.x) and `<repo>/.venv/sdk03` (a2a-sdk
0.3.x) from `interop/requirements-sdk1.txt` / `interop/requirements-sdk03.txt`.

* Idempotent: a venv is reused when the sha256 of its requirement file (and
  of this script's VENV_FORMAT) matches the stamp stored in the venv
  (`.venv/<name>/.a2a-rs-stamp`), and its interpreter still imports `a2a`.
* Concurrency-safe: an exclusive fcntl lock on `.venv/.setup.lock` serialises
  concurrent callers (several cargo test binaries may call this at once);
  the second caller waits, then finds the stamp and returns.
* Needs only python3 (with the venv module) and PyPI.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

INTEROP = Path(__file__).resolve().parent
ROOT = INTEROP.parent
VENV_ROOT = ROOT / '.venv'
VENV_FORMAT = '1'  # bump to force every venv to be rebuilt
VENVS = {
    'sdk1': INTEROP / 'requirements-sdk1.txt',
    'sdk03': INTEROP / 'requirements-sdk03.txt',
    'sdk103': INTEROP / 'requirements-sdk103.txt',
}
STAMP = '.a2a-rs-stamp'


def log(msg: str) -> None:
    print(f'[setup_venvs] {msg}', flush=True)


def python_of(venv_dir: Path) -> Path:
    return venv_dir / 'bin' / 'python'


def wanted_stamp(req: Path) -> str:
    h = hashlib.sha256()
    h.update(VENV_FORMAT.encode())
    h.update(f'{sys.version_info.major}.{sys.version_info.minor}'.encode())
    h.update(req.read_bytes())
    return h.hexdigest()


def is_current(venv_dir: Path, stamp: str) -> bool:
    stamp_file = venv_dir / STAMP
    if not stamp_file.is_file() or stamp_file.read_text().strip() != stamp:
        return False
    py = python_of(venv_dir)
    if not py.exists():
        return False
    probe = subprocess.run(
        [
            str(py),
            '-c',
            'import importlib.util as u, sys; '
            "sys.exit(0 if all(u.find_spec(m) for m in ('a2a', 'uvicorn', 'httpx', 'starlette')) else 1)",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return probe.returncode == 0


def build(name: str, req: Path) -> None:
    venv_dir = VENV_ROOT / name
    stamp = wanted_stamp(req)
    if is_current(venv_dir, stamp):
        log(f'{name}: up to date ({venv_dir})')
        return
    started = time.monotonic()
    log(f'{name}: creating {venv_dir} from {req.name}')
    if venv_dir.exists():
        shutil.rmtree(venv_dir)
    venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    py = str(python_of(venv_dir))
    env = dict(os.environ)
    env['PIP_DISABLE_PIP_VERSION_CHECK'] = '1'
    env.setdefault('PIP_NO_INPUT', '1')
    cmd = [py, '-m', 'pip', 'install', '--quiet', '-r', str(req)]
    log(f'{name}: pip install -r {req.name}')
    result = subprocess.run(cmd, env=env, check=False)
    if result.returncode != 0:
        raise SystemExit(
            f'[setup_venvs] {name}: pip install failed (exit {result.returncode})'
        )
    version = subprocess.run(
        [py, '-c', 'import importlib.metadata as m; print(m.version("a2a-sdk"))'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (venv_dir / STAMP).write_text(stamp + '\n')
    log(
        f'{name}: ready, a2a-sdk {version} '
        f'({time.monotonic() - started:.0f}s)'
    )


def main(argv: list[str]) -> int:
    force = '--force' in argv
    names = [a for a in argv if not a.startswith('-')] or list(VENVS)
    for n in names:
        if n not in VENVS:
            print(f'unknown venv {n!r}; known: {", ".join(VENVS)}', file=sys.stderr)
            return 2
    VENV_ROOT.mkdir(exist_ok=True)
    lock_path = VENV_ROOT / '.setup.lock'
    with open(lock_path, 'w') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log('another setup is running; waiting for its lock')
            fcntl.flock(lock, fcntl.LOCK_EX)
        for n in names:
            if force:
                stamp_file = VENV_ROOT / n / STAMP
                if stamp_file.exists():
                    stamp_file.unlink()
            build(n, VENVS[n])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
