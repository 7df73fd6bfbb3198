#!/usr/bin/env python3
"""Copies the torch-sys crate and stubs out the operators that another libtorch
lacks, so that tch builds against an older PyTorch (scripts/gpu-check-prepare).

torch-sys's C++ wrapper `libtch/torch_api_generated.cpp` is generated from the
operator list of the PyTorch version tch was made for; compiled against an older
libtorch, the wrappers of operators that version does not have (or has with
other arguments) do not compile. This tool compiles each wrapper file with
`-fsyntax-only` against the given headers, finds the wrapper function around
every error, and replaces the body of its `PROTECT( ... )` block with a throw,
so that the symbol still exists (the Rust side declares every wrapper) and a
call returns the error "not available in this libtorch" through tch's usual
error path. It repeats until the file compiles. The list of stubbed functions
is written to PATCHED.txt in the copy. Nothing outside the copy is changed.

Usage: patch_torch_sys.py --src TORCH_SYS_DIR --out DIR --include DIR [--include DIR]
                          [--cxx11-abi 0|1] [--cxx c++]
"""

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

FILES = ["libtch/torch_api_generated.cpp", "libtch/torch_api.cpp"]
FUNC_START = re.compile(r"^[A-Za-z_][\w:<>\*\s]*?\b(atg_\w+|at_\w+|ato_\w+|ati_\w+|atm_\w+|ats_\w+)\s*\(")
ERROR = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):\d+: error: (?P<msg>.*)$")
MAX_ROUNDS = 5


def compile_errors(cxx, path, includes, abi):
    cmd = [cxx, "-fsyntax-only", "-std=c++17", "-w", "-fmax-errors=0", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
           "-DGLOG_USE_GLOG_EXPORT"]
    for inc in includes:
        cmd += ["-I", inc]
    cmd += [path.name]
    r = subprocess.run(cmd, cwd=path.parent, capture_output=True, text=True)
    errors = []
    for line in r.stderr.splitlines():
        m = ERROR.match(line)
        if m and Path(m.group("file")).name == path.name:
            errors.append((int(m.group("line")), m.group("msg")))
    if r.returncode != 0 and not errors:
        sys.exit(f"patch_torch_sys: {path.name} does not compile, and no error line was found:\n{r.stderr[-3000:]}")
    return errors


def enclosing_function(lines, index):
    """(start, end, name) of the function around 0-based line `index`: its
    signature line and its closing `}` line."""
    start = index
    while start >= 0 and not FUNC_START.match(lines[start]):
        start -= 1
    if start < 0:
        return None
    end = index
    while end < len(lines) and lines[end].rstrip() != "}":
        end += 1
    if end == len(lines):
        return None
    return start, end, FUNC_START.match(lines[start]).group(1)


def stub(lines, start, end, name, version):
    """Replaces the inside of the PROTECT( ... ) block of lines[start..end]."""
    body = list(range(start + 1, end))
    open_i = next((i for i in body if lines[i].strip() == "PROTECT("), None)
    close_i = next((i for i in reversed(body) if lines[i].strip() == ")"), None)
    if open_i is None or close_i is None or close_i <= open_i:
        return False
    msg = f"{name}: this operator is not available in libtorch {version} (stubbed by tools/patch_torch_sys.py)"
    lines[open_i + 1:close_i] = [f'    throw std::runtime_error("{msg}");']
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, type=Path, help="the torch-sys crate (e.g. in ~/.cargo/registry/src)")
    ap.add_argument("--out", required=True, type=Path, help="where the patched copy goes (replaced)")
    ap.add_argument("--include", action="append", required=True, help="libtorch include directories")
    ap.add_argument("--cxx11-abi", default="1", choices=["0", "1"])
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--version", default="(other)", help="the libtorch version, for the stubs' message")
    a = ap.parse_args()
    if not (a.src / "Cargo.toml").exists() or not (a.src / FILES[0]).exists():
        sys.exit(f"patch_torch_sys: {a.src} is not a torch-sys crate (no Cargo.toml or {FILES[0]})")
    if a.out.exists():
        shutil.rmtree(a.out)
    shutil.copytree(a.src, a.out)
    stubbed = []
    for rel in FILES:
        path = a.out / rel
        for _ in range(MAX_ROUNDS):
            errors = compile_errors(a.cxx, path, a.include, a.cxx11_abi)
            if not errors:
                break
            lines = path.read_text().split("\n")
            done = set()
            # Bottom up, so that a stub (which shortens the file) does not move
            # the lines of the errors still to handle.
            for line_no, msg in sorted(errors, key=lambda e: -e[0]):
                f = enclosing_function(lines, line_no - 1)
                if f is None:
                    sys.exit(f"patch_torch_sys: {rel}:{line_no}: an error outside a wrapper function: {msg}")
                start, end, name = f
                if name in done:
                    continue
                if not stub(lines, start, end, name, a.version):
                    sys.exit(f"patch_torch_sys: {rel}:{line_no}: cannot stub {name} (no PROTECT block): {msg}")
                done.add(name)
                stubbed.append(f"{rel} {name}: {msg}")
            path.write_text("\n".join(lines))
        else:
            sys.exit(f"patch_torch_sys: {rel} still does not compile after {MAX_ROUNDS} rounds")
    (a.out / "PATCHED.txt").write_text(
        f"torch-sys from {a.src}, patched for libtorch {a.version}; stubbed functions:\n"
        + "".join(s + "\n" for s in stubbed))
    print(f"patch_torch_sys: {len(stubbed)} wrapper(s) stubbed in {a.out}")
    for s in stubbed:
        print("  " + s)


if __name__ == "__main__":
    main()
