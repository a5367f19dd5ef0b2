#!/usr/bin/env python3
"""Runs ptxas on the embedded PTX and prints registers / stack / spills per kernel.

usage: ptxas-report.py PTXAS PTX ARCH   (exits non-zero when ptxas fails)
"""
import re
import subprocess
import sys

ptxas, ptx, arch = sys.argv[1:4]

# The external family's kernels declare their objective (`.extern .func`), which the
# engine links in at run time. For the report, each such declaration becomes a stub
# definition that returns 0, so that the whole file assembles as one program.
text = open(ptx).read()
EXTERN = re.compile(r"\.extern \.func\s*\(\s*\.param \.(b\d+) (\w+)\s*\)\s*(\w+)\s*\(([^)]*)\)\s*;")
stubbed = []
def stub(m):
    ty, ret, name, params = m.groups()
    stubbed.append(name)
    return (f".visible .func (.param .{ty} {ret}) {name}({params})\n"
            f"{{\n\tst.param.{ty} [{ret}], 0;\n\tret;\n}}")
text = EXTERN.sub(stub, text)
if stubbed:
    src = "/tmp/ptxas-report-stubbed.ptx"
    with open(src, "w") as f:
        f.write(text)
    ptx = src
r = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", "/dev/null"],
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.stderr.write(r.stderr)
    sys.exit(f"ptxas -arch={arch} failed on {ptx}")
rows, cur = [], None
for line in r.stderr.splitlines():
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m:
        cur = {"name": m.group(1)}
        rows.append(cur)
        continue
    if cur is None:
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and "stack" not in cur:
        cur["stack"], cur["spill_st"], cur["spill_ld"] = m.groups()
    m = re.search(r"Used (\d+) registers", line)
    if m:
        cur["regs"] = m.group(1)
print(f"ptxas -arch={arch}: {len(rows)} kernels"
      + (f" (stub objectives returning 0: {', '.join(sorted(set(stubbed)))})" if stubbed else ""))
print(f"{'kernel':34} {'regs':>5} {'stack':>6} {'spills':>7}")
for c in sorted(rows, key=lambda c: c["name"]):
    print(f"{c['name']:34} {c.get('regs','?'):>5} {c.get('stack','?'):>6} "
          f"{int(c.get('spill_st',0))+int(c.get('spill_ld',0)):>7}")
