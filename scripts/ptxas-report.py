#!/usr/bin/env python3
"""Runs ptxas on the embedded PTX and prints registers / stack / spills per kernel
(for an ARCH older than sm_80, without the pipelined kernels, which need sm_80).

usage: ptxas-report.py PTXAS PTX ARCH   (exits non-zero when ptxas fails)
"""
import os
import re
import subprocess
import sys
import tempfile

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

# The pipelined kernels (`cp.async`) are sm_80 code: the build gives their own modules
# `.target sm_80`. For an older ARCH they are left out of the report; for sm_80 and
# later the whole file is assembled as `.target sm_80` (ptxas checks the instructions
# against the file's target, not against ARCH).
dropped = []
raised = False
if int(arch.split("_")[1]) >= 80:
    t = re.search(r"^\.target sm_(\d+)", text, flags=re.M)
    if t and int(t.group(1)) < 80:
        text = re.sub(r"^\.target sm_\d+", ".target sm_80", text, count=1, flags=re.M)
        raised = True
else:
    out, lines, j = [], text.split("\n"), 0
    while j < len(lines):
        m = re.match(r"\s*(\.visible\s+)?\.entry\s+(\w*_pipelined\w*)", lines[j])
        if not m:
            out.append(lines[j])
            j += 1
            continue
        dropped.append(m.group(2))
        depth, started = 0, False
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            started = started or "{" in lines[j]
            j += 1
            if started and depth == 0:
                break
    text = "\n".join(out)
if stubbed or dropped or raised:
    # A file of its own per call: reports for several architectures may run at once.
    with tempfile.NamedTemporaryFile("w", suffix=f"-{arch}.ptx", prefix="ptxas-report-",
                                     delete=False) as f:
        f.write(text)
    ptx = f.name
r = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", "/dev/null"],
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.stderr.write(r.stderr)
    sys.exit(f"ptxas -arch={arch} failed on {ptx}")
if ptx != sys.argv[2]:
    os.remove(ptx)
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
      + (f" (stub objectives returning 0: {', '.join(sorted(set(stubbed)))})" if stubbed else "")
      + (f"; {len(dropped)} sm_80 kernels (*_pipelined*) left out" if dropped else ""))
print(f"{'kernel':34} {'regs':>5} {'stack':>6} {'spills':>7}")
for c in sorted(rows, key=lambda c: c["name"]):
    print(f"{c['name']:34} {c.get('regs','?'):>5} {c.get('stack','?'):>6} "
          f"{int(c.get('spill_st',0))+int(c.get('spill_ld',0)):>7}")
