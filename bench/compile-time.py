#!/usr/bin/env python3
"""Compile-time cost of #[skill]: build a crate of N skills and the same crate of N
plain async fns (same types, same derives), each from clean, and print the ratio.

Dependencies are built once beforehand and shared, so the numbers compare the
crates' own compilation, which is what the macro adds to. Each crate is built
ROUNDS times alternately. Wall time and CPU time (user + system over every rustc
thread) are both reported, as median and best-of-ROUNDS ratios: on a shared,
noisy machine the CPU time and the best run are the steadier figures.

With --instructions, each crate is also built once under cachegrind (valgrind
must be installed) and the instructions of its rustc printed: a figure that, unlike
the times, does not move between runs.

usage: python3 bench/compile-time.py [N] [ROUNDS] [--instructions]
       (defaults: 200 skills, 3 rounds)
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "bench-compile"

TYPES = '''
#[derive(Debug, Deserialize, JsonSchema)]
pub struct In{i} {{
    /// The query.
    pub query: String,
    #[serde(default)]
    pub limit: u32,
    pub tags: Vec<String>,
}}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Out{i} {{
    pub results: Vec<String>,
    pub total: u64,
}}

#[derive(Debug, thiserror::Error, {derive_failure})]
pub enum Err{i} {{
    /// The backend did not answer.
    #[error("backend unavailable")]
    {retryable}Unavailable,
    /// The query was rejected.
    #[error("bad query")]
    BadQuery,
}}
'''

BODY = '''{{
    if input.query.is_empty() {{
        return Err(Err{i}::BadQuery);
    }}
    let n = input.limit.max(1) as usize;
    let results: Vec<String> = input.tags.iter().take(n).map(|t| format!("{{t}}:{{}}", input.query)).collect();
    Ok(Out{i} {{ total: results.len() as u64, results }})
}}
'''


def skill_fn(i):
    return f'''
/// Search item set {i} by query and tags.
#[skill(
    version = "1.0.0",
    domain = "core",
    owners("bench-team"),
    autonomy = "L2",
    capabilities(BenchRead),
    precondition(code = "TOO_MANY", message = "at most 100 tags", check = |i: &In{i}| i.tags.len() <= 100),
    postcondition(check = |o: &Out{i}| o.total as usize == o.results.len()),
    timeout_ms = 5_000, retries = 2, backoff = "linear", idempotent,
    mcp(tool_name = "bench_search_{i}", permissions("bench:read")),
)]
pub async fn search_{i}(input: In{i}) -> Result<Out{i}, Err{i}> {BODY.format(i=i)}'''


def plain_fn(i):
    return f'''
/// Search item set {i} by query and tags.
pub async fn search_{i}(input: In{i}) -> Result<Out{i}, Err{i}> {BODY.format(i=i)}'''


def crate_source(n, skills):
    head = "#![allow(dead_code)]\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n"
    if skills:
        head += "use skill_runtime::prelude::*;\n\n/// Read bench data.\n#[capability(id = \"bench.read\", effect = \"none\", operation = \"read\")]\npub struct BenchRead;\n"
    parts = [head]
    for i in range(n):
        parts.append(TYPES.format(
            i=i,
            derive_failure="FailureModes" if skills else "Clone",
            retryable="#[failure(retryable)]\n    " if skills else "",
        ))
        parts.append(skill_fn(i) if skills else plain_fn(i))
    return "\n".join(parts)


def write_workspace(n):
    WORK.mkdir(parents=True, exist_ok=True)
    runtime = ROOT / "skill-runtime"
    (WORK / "Cargo.toml").write_text(
        '[workspace]\nresolver = "3"\nmembers = ["skills", "plain"]\n\n'
        '[profile.dev]\ndebug = "line-tables-only"\n'
    )
    for name, skills in (("skills", True), ("plain", False)):
        d = WORK / name
        (d / "src").mkdir(parents=True, exist_ok=True)
        (d / "Cargo.toml").write_text(
            f'[package]\nname = "bench-{name}"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
            f'[dependencies]\nskill-runtime = {{ path = "{runtime}" }}\n'
            'serde = { version = "1", features = ["derive"] }\nschemars = "1.2"\nthiserror = "2"\n'
        )
        (d / "src" / "lib.rs").write_text(crate_source(n, skills))
    lock = ROOT / "Cargo.lock"
    if lock.exists():
        (WORK / "Cargo.lock").write_bytes(lock.read_bytes())


def cargo(*args, extra_env=None):
    env = dict(os.environ)
    env.pop("CARGO_TARGET_DIR", None)
    env.update(extra_env or {})
    subprocess.run(["cargo", *args], cwd=WORK, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def instructions(pkg):
    """Instructions of one clean build of `pkg`'s own rustc, by cachegrind."""
    with tempfile.TemporaryDirectory() as out:
        wrapper = Path(out) / "wrap.sh"
        wrapper.write_text(
            "#!/bin/sh\nexec valgrind --tool=cachegrind --cache-sim=no "
            f"--cachegrind-out-file={out}/cg.%p.out \"$@\"\n"
        )
        wrapper.chmod(0o755)
        cargo("clean", "-q", "-p", pkg)
        cargo("build", "-q", "-p", pkg, extra_env={"RUSTC_WORKSPACE_WRAPPER": str(wrapper)})
        total = 0
        for f in Path(out).glob("cg.*.out"):
            for line in f.read_text().splitlines():
                if line.startswith("summary:"):
                    total += int(line.split()[1])
        return total


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_clean_build(pkg):
    """Wall time and CPU time (user + system, every rustc thread) of one build."""
    cargo("clean", "-q", "-p", pkg)
    cpu = cpu_of_children()
    start = time.perf_counter()
    cargo("build", "-q", "-p", pkg)
    return time.perf_counter() - start, cpu_of_children() - cpu


def main():
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    unknown = set(flags) - {"--instructions"}
    if unknown:
        sys.exit(f"unknown option {sorted(unknown)[0]}; usage: compile-time.py [N] [ROUNDS] [--instructions]")
    n = int(args[0]) if len(args) > 0 else 200
    rounds = int(args[1]) if len(args) > 1 else 3
    write_workspace(n)
    print(f"building dependencies once (shared by both crates) in {WORK} ...", flush=True)
    cargo("build", "-q", "--workspace")
    times = {"bench-skills": [], "bench-plain": []}
    for r in range(rounds):
        for pkg in times:
            wall, cpu = timed_clean_build(pkg)
            times[pkg].append((wall, cpu))
            print(f"round {r + 1}: {pkg:<13} wall {wall:6.2f} s   cpu {cpu:6.2f} s", flush=True)
    print()
    for label, i in (("wall", 0), ("cpu", 1)):
        skills = [t[i] for t in times["bench-skills"]]
        plain = [t[i] for t in times["bench-plain"]]
        med = statistics.median(skills) / statistics.median(plain)
        best = min(skills) / min(plain)
        print(f"{label:>4}: {n} skills {statistics.median(skills):6.2f} s, {n} plain async fns "
              f"{statistics.median(plain):6.2f} s (median of {rounds});  "
              f"ratio {med:.2f}x median, {best:.2f}x best-of-{rounds}")
    if "--instructions" in flags:
        skills, plain = instructions("bench-skills"), instructions("bench-plain")
        print(f"instr: {n} skills {skills / 1e9:.3f} G, {n} plain async fns {plain / 1e9:.3f} G;  "
              f"ratio {skills / plain:.3f}x")
    print("target: at most 1.50x")

if __name__ == "__main__":
    main()
