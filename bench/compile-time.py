#!/usr/bin/env python3
"""Compile-time cost of #[skill]: build a crate of N skills and the same crate of N
plain async fns (same types, same derives), each from clean, and print the ratio.
Two more crates give the scale: the same N functions as minimal skills (a bare
`#[skill]`), and as rmcp `#[tool]`s (each a method of one `#[tool_router]` impl
calling the plain function, its input `Parameters<In>`, its output `Json<Out>`).
With --hand, a fifth: the plain functions registered by hand the common way (an
`inventory` table of name, description, both schemas by `schema_for!`, and a
function that decodes with `serde_json::from_value`, runs the function in a
boxed future and encodes with `serde_json::to_vec`): what a crate pays for
calling its functions by name through serde with none of a skill's manifest or
checks, the floor a registry written without the macro starts from.

Dependencies are built once beforehand and shared, so the numbers compare the
crates' own compilation, which is what the macro adds to. Each crate is built
ROUNDS times alternately. Wall time and CPU time (user + system over every rustc
thread) are both reported, as median and best-of-ROUNDS ratios: on a shared,
noisy machine the CPU time and the best run are the steadier figures.

With --instructions, each crate is also built once under cachegrind (valgrind
must be installed) and the instructions of its rustc printed: a figure that, unlike
the times, does not move between runs.

With --default-profile, the crates build with cargo's default dev profile
(full debug info), as a user's crate does; otherwise with line tables only.

With --optimized-macros, the workspace builds its procedural macros (and
build scripts) optimized, `[profile.dev.build-override] opt-level = 3`, as a
crate with many skills can choose to (docs/performance.md, "The edit loop").

With --edit, the edit loop instead of clean builds: in each crate, one
function body is edited (`limit.max(1)` <-> `limit.max(2)` in `search_{N/2}`)
and the crate rebuilt incrementally, `cargo check` then `cargo build`, in
ROUNDS interleaved rounds; medians and ratios to the plain crate (with
--instructions, the instructions of the rustc of one more edit each).

usage: python3 bench/compile-time.py [N] [ROUNDS] [--instructions] [--default-profile] [--hand] [--edit] [--optimized-macros]
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


def minimal_fn(i):
    return f'''
/// Search item set {i} by query and tags.
#[skill]
pub async fn search_{i}(input: In{i}) -> Result<Out{i}, Err{i}> {BODY.format(i=i)}'''


def rmcp_tool(i):
    return f'''
    /// Search item set {i} by query and tags.
    #[tool(name = "bench_search_{i}")]
    pub async fn search_{i}(&self, Parameters(input): Parameters<In{i}>) -> Result<Json<Out{i}>, String> {{
        search_{i}(input).await.map(Json).map_err(|e| e.to_string())
    }}
'''


def hand_entry(i):
    return f'''
fn call_{i}(params: serde_json::Value) -> Call {{
    Box::pin(async move {{
        let input: In{i} = serde_json::from_value(params).map_err(|e| e.to_string())?;
        let output = search_{i}(input).await.map_err(|e| e.to_string())?;
        serde_json::to_vec(&output).map_err(|e| e.to_string())
    }})
}}

inventory::submit!(Entry {{
    name: "search_{i}",
    description: "Search item set {i} by query and tags.",
    input_schema: || schemars::schema_for!(In{i}),
    output_schema: || schemars::schema_for!(Out{i}),
    call: call_{i},
}});
'''


# The hand-written registry's table, once per crate.
HAND_HEAD = '''use std::future::Future;
use std::pin::Pin;

/// A call in flight: the output as JSON, or the error's text.
pub type Call = Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send>>;

/// One function, registered by hand.
pub struct Entry {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> schemars::Schema,
    pub output_schema: fn() -> schemars::Schema,
    pub call: fn(serde_json::Value) -> Call,
}

inventory::collect!(Entry);
'''


def plain_fn(i):
    return f'''
/// Search item set {i} by query and tags.
pub async fn search_{i}(input: In{i}) -> Result<Out{i}, Err{i}> {BODY.format(i=i)}'''


# The crates, each built the same way; "plain" is the baseline of every ratio.
KINDS = ("plain", "rmcp", "minimal", "skills")
# With --hand, one more.
HAND = "hand"


def crate_source(n, kind):
    skills = kind in ("skills", "minimal")
    head = "#![allow(dead_code)]\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n"
    if skills:
        head += "use skill_runtime::prelude::*;\n\n/// Read bench data.\n#[capability(id = \"bench.read\", effect = \"none\", operation = \"read\")]\npub struct BenchRead;\n"
    if kind == HAND:
        head += HAND_HEAD
    if kind == "rmcp":
        head += (
            "use rmcp::handler::server::{router::tool::ToolRouter, wrapper::{Json, Parameters}};\n"
            "use rmcp::{tool, tool_router};\n\n"
            "/// The server whose tools are the functions.\n#[derive(Clone)]\n"
            "pub struct Bench {\n    tool_router: ToolRouter<Self>,\n}\n"
        )
    parts = [head]
    tools = []
    for i in range(n):
        parts.append(TYPES.format(
            i=i,
            derive_failure="FailureModes" if skills else "Clone",
            retryable="#[failure(retryable)]\n    " if kind == "skills" else "",
        ))
        if kind == "skills":
            parts.append(skill_fn(i))
        elif kind == "minimal":
            parts.append(minimal_fn(i))
        else:
            parts.append(plain_fn(i))
            if kind == "rmcp":
                tools.append(rmcp_tool(i))
            if kind == HAND:
                parts.append(hand_entry(i))
    if tools:
        parts.append("#[tool_router]\nimpl Bench {" + "".join(tools) + "}\n")
    return "\n".join(parts)


LABELS = {"bench-plain": "plain async fns", "bench-rmcp": "rmcp #[tool]s",
          "bench-minimal": "minimal #[skill]s", "bench-skills": "full #[skill]s",
          "bench-hand": "by hand (serde)"}


def write_workspace(n, default_profile=False, kinds=KINDS, optimized_macros=False):
    WORK.mkdir(parents=True, exist_ok=True)
    runtime = ROOT / "skill-runtime"
    profile = "" if default_profile else '\n[profile.dev]\ndebug = "line-tables-only"\n'
    if optimized_macros:
        profile += '\n[profile.dev.build-override]\nopt-level = 3\n'
    (WORK / "Cargo.toml").write_text(
        '[workspace]\nresolver = "3"\nmembers = [' + ", ".join(f'"{k}"' for k in kinds) + ']\n' + profile
    )
    for kind in kinds:
        d = WORK / kind
        (d / "src").mkdir(parents=True, exist_ok=True)
        deps = (
            # The plain crate keeps the runtime as a dependency it does not use,
            # as it always had: its figures stay comparable from run to run.
            f'skill-runtime = {{ path = "{runtime}" }}\n' if kind != "rmcp"
            else 'rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }\n' if kind == "rmcp"
            else ""
        ) + ('serde_json = "1"\ninventory = "0.3"\n' if kind == HAND else "")
        (d / "Cargo.toml").write_text(
            f'[package]\nname = "bench-{kind}"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
            f'[dependencies]\n{deps}'
            'serde = { version = "1", features = ["derive"] }\nschemars = "1.2"\nthiserror = "2"\n'
        )
        (d / "src" / "lib.rs").write_text(crate_source(n, kind))
    lock = ROOT / "Cargo.lock"
    if lock.exists():
        (WORK / "Cargo.lock").write_bytes(lock.read_bytes())


def cargo(*args, extra_env=None, capture=False):
    """Run cargo in the benchmark's workspace (and its own target directory);
    its output when `capture`."""
    env = dict(os.environ)
    env.pop("CARGO_TARGET_DIR", None)
    env.update(extra_env or {})
    done = subprocess.run(["cargo", *args], cwd=WORK, env=env, check=True, text=True,
                          stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    return done.stdout


def instructions(pkg):
    """Instructions of one clean build of `pkg`'s own rustc, by cachegrind."""
    cargo("clean", "-q", "-p", pkg)
    return rustc_instructions("build", "-q", "-p", pkg)


def rustc_instructions(*args):
    """Instructions of the workspace's own rustc runs in `cargo ARGS`, by
    cachegrind (the dependencies' rustc, if any runs, is not wrapped). The
    wrapper is always the same file: its path is part of what cargo
    fingerprints, and a new one would rebuild the crate from nothing."""
    wrapper = WORK / "cachegrind-wrap.sh"
    wrapper.write_text(
        "#!/bin/sh\nexec valgrind --tool=cachegrind --cache-sim=no "
        "--cachegrind-out-file=\"$CACHEGRIND_OUT/cg.%p.out\" \"$@\"\n"
    )
    wrapper.chmod(0o755)
    with tempfile.TemporaryDirectory() as out:
        cargo(*args, extra_env={"RUSTC_WORKSPACE_WRAPPER": str(wrapper), "CACHEGRIND_OUT": out})
        total = 0
        for f in Path(out).glob("cg.*.out"):
            for line in f.read_text().splitlines():
                if line.startswith("summary:"):
                    total += int(line.split()[1])
        return total


def edit(kind, n):
    """Flip the edited function's `limit.max(1)` to `(2)` or back."""
    path = WORK / kind / "src" / "lib.rs"
    text = path.read_text()
    # The function that holds the body (in the rmcp crate, the plain one the
    # tool method calls): its signature, then the first `limit.max(` after it.
    at = text.index(f"fn search_{n // 2}(input: In{n // 2})")
    at = text.index("limit.max(", at) + len("limit.max(")
    flipped = "2" if text[at] == "1" else "1"
    path.write_text(text[:at] + flipped + text[at + 1:])


def timed(*args):
    """Wall time and CPU time of one cargo command."""
    cpu = cpu_of_children()
    start = time.perf_counter()
    cargo(*args)
    return time.perf_counter() - start, cpu_of_children() - cpu


def edit_loop(n, rounds, kinds, flags):
    """The --edit measurement (see the module's documentation)."""
    pkgs = [f"bench-{k}" for k in kinds]
    for pkg in pkgs:
        cargo("check", "-q", "-p", pkg)
    times = {(pkg, how): [] for pkg in pkgs for how in ("check", "build")}
    for r in range(rounds):
        for kind, pkg in zip(kinds, pkgs):
            edit(kind, n)
            for how in ("check", "build"):
                wall, cpu = timed(how, "-q", "-p", pkg)
                times[(pkg, how)].append((wall, cpu))
                print(f"round {r + 1}: {pkg:<14} {how:<5} wall {wall:6.2f} s   cpu {cpu:6.2f} s", flush=True)
    print()
    for how in ("check", "build"):
        print(f"after editing one function, incremental `cargo {how}`, median of {rounds} (cpu in brackets):")
        plain_wall = statistics.median(t[0] for t in times[("bench-plain", how)])
        plain_cpu = statistics.median(t[1] for t in times[("bench-plain", how)])
        for pkg in pkgs:
            wall = statistics.median(t[0] for t in times[(pkg, how)])
            cpu = statistics.median(t[1] for t in times[(pkg, how)])
            print(f"  {n} {LABELS[pkg]:<18} {wall:6.2f} s   {wall / plain_wall:.2f}x   ({cpu / plain_cpu:.2f}x)")
    if "--instructions" in flags:
        print("instructions of each crate's rustc after one more edit (cachegrind):")
        for how in ("check", "build"):
            counts = {}
            for kind, pkg in zip(kinds, pkgs):
                # Built once under the wrapper first (cargo rebuilds a crate
                # whose compiler changed), then edited and counted.
                rustc_instructions(how, "-q", "-p", pkg)
                edit(kind, n)
                counts[pkg] = rustc_instructions(how, "-q", "-p", pkg)
            for pkg in pkgs:
                print(f"  {how:<5} {n} {LABELS[pkg]:<18} {counts[pkg] / 1e9:7.3f} G   "
                      f"{counts[pkg] / counts['bench-plain']:.3f}x")
    print("target: full #[skill]s at most 1.15x plain on `cargo check`, 1.25x on `cargo build`")


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_clean_build(pkg):
    """Wall time and CPU time (user + system, every rustc thread) of one build."""
    cargo("clean", "-q", "-p", pkg)
    return timed("build", "-q", "-p", pkg)


def main():
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    unknown = set(flags) - {"--instructions", "--default-profile", "--hand", "--edit", "--optimized-macros"}
    if unknown:
        sys.exit(f"unknown option {sorted(unknown)[0]}; usage: compile-time.py [N] [ROUNDS] [--instructions] [--default-profile] [--hand] [--edit] [--optimized-macros]")
    n = int(args[0]) if len(args) > 0 else 200
    rounds = int(args[1]) if len(args) > 1 else 3
    default_profile = "--default-profile" in flags
    kinds = KINDS + (HAND,) if "--hand" in flags else KINDS
    optimized = "--optimized-macros" in flags
    write_workspace(n, default_profile, kinds, optimized)
    profile = "cargo's default dev profile" if default_profile else "dev profile, line tables only"
    if optimized:
        profile += ", procedural macros optimized"
    print(f"building dependencies once (shared by every crate) in {WORK}, {profile} ...", flush=True)
    pkgs = [f"bench-{k}" for k in kinds]
    # One package at a time, as each is measured: a build of the whole
    # workspace unifies the dependencies' features across the four crates,
    # and the dependencies of one built alone would be built again.
    for pkg in pkgs:
        cargo("build", "-q", "-p", pkg)
    if "--edit" in flags:
        edit_loop(n, rounds, kinds, flags)
        return
    times = {pkg: [] for pkg in pkgs}
    for r in range(rounds):
        for pkg in pkgs:
            wall, cpu = timed_clean_build(pkg)
            times[pkg].append((wall, cpu))
            print(f"round {r + 1}: {pkg:<14} wall {wall:6.2f} s   cpu {cpu:6.2f} s", flush=True)
    print()
    labels = LABELS
    for label, i in (("wall", 0), ("cpu", 1)):
        plain = [t[i] for t in times["bench-plain"]]
        print(f"{label}, median of {rounds} (best-of-{rounds} ratio in brackets):")
        for pkg in pkgs:
            mine = [t[i] for t in times[pkg]]
            med = statistics.median(mine) / statistics.median(plain)
            best = min(mine) / min(plain)
            print(f"  {n} {labels[pkg]:<18} {statistics.median(mine):6.2f} s   {med:.2f}x  ({best:.2f}x)")
    if "--instructions" in flags:
        counts = {pkg: instructions(pkg) for pkg in pkgs}
        print("instructions of each crate's rustc (cachegrind):")
        for pkg in pkgs:
            print(f"  {n} {labels[pkg]:<18} {counts[pkg] / 1e9:7.3f} G   {counts[pkg] / counts['bench-plain']:.3f}x")
    print("target: full #[skill]s at most 1.25x plain async fns")

if __name__ == "__main__":
    main()
