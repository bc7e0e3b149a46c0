#!/usr/bin/env python3
"""Where the compile-time cost of a full #[skill] goes, piece by piece.

The crates of bench/compile-time.py (its full-skills crate, N functions), built
from clean under cachegrind (valgrind must be installed), in variants that each
leave one piece out; the instructions of each crate's rustc, and per skill the
difference a piece makes:

- the plain crate, and the same with its functions private: rustc then type
  checks the bodies but compiles no code for them (the bodies' code, which the
  skills crate compiles too, through the registration);
- the full-skills crate through #[skill], and the same items written out by
  hand (what the macro writes for one skill, `HAND` below): the difference is
  the macro's own run;
- the written-out crate without the registration (`inventory::submit!` of the
  entry, and with it everything the entry makes rustc compile), then without the
  direct-call function, the conditions and the effect assertion, the manifest's
  fields, the capability grants: what the items cost to check, without code;
- the written-out crate on a copy of the runtime whose typed function (the one
  generic function per skill behind the erased table) answers nothing, then
  only decoding, only running the handler, only encoding: what each of the
  three costs in code compiled per skill.

`HAND` mirrors what `#[skill]` expands to for the benchmark's function at the
time of writing (`RUSTC_BOOTSTRAP=1 cargo rustc -p bench-skills --
-Zunpretty=expanded` shows it). If the macro's output changes, update `HAND`,
or the macro's figure measures the difference in output as well.

With --llvm-lines, it instead counts the LLVM IR that rustc generates for the
plain crate and the full-skills crate (`cargo llvm-lines`, installed from
crates.io if missing) and prints, per skill, the lines each function adds,
generic instantiations summed over the crate's skills. Code generation costs
in proportion to it; this says which function of a skill's glue is worth
cutting, without a build under valgrind.

usage: python3 bench/compile-breakdown.py [N]     (default 50; about 2 minutes
       per variant on 2 cores)
       python3 bench/compile-breakdown.py [N] --llvm-lines   (seconds, once the
       benchmark's dependencies are built)
"""
import importlib.util
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("compile_time", HERE / "compile-time.py")
ct = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ct)

P = "::skill_runtime::__private_v2"
# This repository (the benchmark builds against `ct.ROOT`, pointed at a copy
# for the runtime variants).
REPO = ct.ROOT


def hand(i, leave_out):
    """One full skill of the benchmark as #[skill] writes it, less `leave_out`."""
    out = set(leave_out)
    caller = "" if "caller" in out else f"""
/// Search item set {i} by query and tags.
#[inline]
pub fn search_{i}<'__call>(ctx: &dyn {P}::Authority<'__call, search_{i}>, input: In{i})
    -> impl ::core::future::Future<Output = Result<Out{i}, Err{i}>> + ::core::marker::Send + use<'__call> {{
    {P}::run_called::<search_{i}>(ctx, input)
}}"""
    if "manifest" in out:
        manifest = f'&{P}::Manifest {{ name: "search_{i}", ..{P}::Manifest::DEFAULT }}'
    else:
        manifest = f"""&{P}::Manifest {{
            name: "search_{i}", version: "1.0.0", description: "Search item set {i} by query and tags.",
            domain: ::core::option::Option::Some("core"), owners: &["bench-team"], autonomy: {P}::Autonomy::L2,
            execution: {P}::Execution {{ timeout_ms: 5_000, retries: 2, backoff: {P}::Backoff::Linear, idempotent: true }},
            mcp: {P}::Mcp {{ exposed: true, tool_name: ::core::option::Option::Some("bench_search_{i}"), permissions: &["bench:read"] }},
            capabilities: &[<BenchRead as {P}::Capability>::INFO],
            entrypoint: {P}::Entrypoint {{ module: "bench_skills", handler: "search_{i}" }},
            location: {P}::Location {{ file: "skills/src/lib.rs", line: 50u32, column: 14u32 }},
            ..{P}::Manifest::DEFAULT
        }}"""
    conditions = "" if "conditions" in out else f"""
        const PRECONDITIONS: &'static [{P}::Precondition<Self>] = &[{P}::Precondition::<search_{i}> {{
            error_code: "TOO_MANY", message: "at most 100 tags", condition: "|i: &In{i}| i.tags.len() <= 100",
            check: {P}::InputCheck::Input({{ fn __skill_check(i: &In{i}) -> bool {{ i.tags.len() <= 100 }} __skill_check }}),
        }}];
        const POSTCONDITIONS: &'static [{P}::Postcondition<Self>] = &[{P}::Postcondition::<search_{i}> {{
            assertion: "|o: &Out{i}| o.total as usize == o.results.len()", rollback_action: ::core::option::Option::None,
            check: {P}::OutputCheck::Output({{ fn __skill_check(o: &Out{i}) -> bool {{ o.total as usize == o.results.len() }} __skill_check }}),
        }}];"""
    registration = "" if "registration" in out else f"""
    {P}::inventory::submit! {{ {P}::SkillEntry::of::<search_{i}>() }}"""
    grants = "" if "grants" in out else f"""
    unsafe impl {P}::Declares<BenchRead> for search_{i} {{}}
    unsafe impl<__S> {P}::CallableBy<__S> for search_{i} where __S: {P}::Declares<BenchRead> {{}}"""
    effect = "" if "conditions" in out else f"""
    {P}::assert_effect_listed(<BenchRead as {P}::Capability>::INFO, "skill `search_{i}` declares capability `BenchRead`, which writes; list it")"""
    body = ct.BODY.format(i=i)
    return f"""{caller}
#[allow(non_camel_case_types)]
pub struct search_{i} {{}}
const _: () = {{
    async fn __skill_body_search_{i}(input: In{i}) -> Result<Out{i}, Err{i}> {body}
    unsafe impl {P}::Skill for search_{i} {{
        type Input = In{i};
        type Output = Out{i};
        type Error = Err{i};
        const MANIFEST: &'static {P}::Manifest = {manifest};{conditions}
        fn run(_: {P}::Ctx<'_, Self>, input: In{i})
            -> impl ::core::future::Future<Output = ::core::result::Result<Out{i}, Err{i}>> + ::core::marker::Send {{
            __skill_body_search_{i}(input)
        }}
    }}{registration}{grants}{effect}
}};
"""


def written_out(n, leave_out=()):
    src = ct.crate_source(n, "skills")
    head = src.split("\n#[derive")[0]
    parts = [head]
    for i in range(n):
        parts.append(ct.TYPES.format(i=i, derive_failure="FailureModes",
                                     retryable="#[failure(retryable)]\n    "))
        parts.append(hand(i, leave_out))
    return "\n".join(parts)


def failure_by_hand(src, n):
    """The error enums' `#[derive(FailureModes)]` replaced by what it writes."""
    derive = "#[derive(Debug, thiserror::Error, FailureModes)]"
    assert src.count(derive) == n, src.count(derive)
    src = src.replace(derive, "#[derive(Debug, thiserror::Error)]").replace("#[failure(retryable)]", "")
    mode = lambda code, doc, retryable: (
        f'{P}::FailureMode {{ code: "{code}", description: "{doc}", retryable: {retryable} }}')
    impls = [f"""
impl {P}::FailureModes for Err{i} {{
    const FAILURE_MODES: &'static [{P}::FailureMode] = &[{mode("unavailable", "The backend did not answer.", "true")}, {mode("bad_query", "The query was rejected.", "false")}];
    fn failure_mode(&self) -> &'static {P}::FailureMode {{
        match self {{
            Self::Unavailable {{ .. }} => &<Self as {P}::FailureModes>::FAILURE_MODES[0],
            Self::BadQuery {{ .. }} => &<Self as {P}::FailureModes>::FAILURE_MODES[1],
        }}
    }}
}}""" for i in range(n)]
    return src + "".join(impls) + "\n"


def without_impl_skill(src, n):
    out, k = re.subn(rf"    unsafe impl {re.escape(P)}::Skill for search_\d+ \{{.*?\n    \}}\n", "", src, flags=re.S)
    assert k == n, k
    return out


def without_marker(src, n):
    out, k = re.subn(r"#\[allow\(non_camel_case_types\)\]\npub struct search_\d+ \{\}\n", "", src)
    assert k == n, k
    return out


def without_failure_modes(src, n):
    out, k = re.subn(rf"\nimpl {re.escape(P)}::FailureModes for Err\d+ \{{.*?\n\}}", "", src, flags=re.S)
    assert k == n, k
    # As the plain crate's errors.
    return out.replace("#[derive(Debug, thiserror::Error)]", "#[derive(Debug, thiserror::Error, Clone)]")


def runtime_copy(typed_arms):
    """A copy of the workspace whose runtime's `typed` answers only
    `typed_arms` (of "decode", "run", "encode"); the others are unreachable.
    The whole workspace, so that the runtime's manifest resolves as it does
    here; its build output is not copied."""
    # Outside the benchmark's workspace, whose members a path dependency
    # inside it would become.
    dst = REPO / "target" / "bench-variant"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(REPO, dst, ignore=shutil.ignore_patterns("target", ".git", "node_modules"))
    entry = dst / "skill-runtime" / "src" / "contract" / "entry.rs"
    src = entry.read_text()
    m = re.search(r"fn typed<S: Skill>\(op: Op<'_>\) -> Answer(?:<'_>)? \{\n    match op \{\n(.*?)\n    \}\n\}\n", src, re.S)
    if not m:
        sys.exit("skill-runtime/src/contract/entry.rs: `fn typed` is not shaped as this script expects; update runtime_copy()")
    arms = re.split(r"(?m)^(?=        Op::)", m.group(1))
    kept = [a for a in arms if any(a.startswith(f"        Op::{k.capitalize()}") for k in typed_arms)]
    # What no arm answers is unreachable (unused imports are only warnings).
    body = "".join(kept).rstrip("\n") + ("\n" if kept else "")
    body += "        #[allow(unreachable_patterns)]\n        _ => unimplemented!(),"
    entry.write_text(src[: m.start(1)] + body + src[m.end(1):])
    return dst


def measure(label, pkg="bench-skills"):
    ct.cargo("build", "-q", "-p", pkg)
    g = ct.instructions(pkg)
    print(f"  {label:<58} {g / 1e9:8.3f} G", flush=True)
    return g


def llvm_lines(pkg):
    """Lines of LLVM IR per function of `pkg`'s library, names made the same
    for every skill and for both crates (`search_7`, `In7` -> `search_N`,
    `InN`; a plain function's body and a skill's are both `body`)."""
    out = ct.cargo("llvm-lines", "-q", "-p", pkg, "--lib", capture=True)
    lines = Counter()
    for row in out.splitlines():
        m = re.match(r"\s*(\d+)\s+\([^)]*\)\s+\d+\s+\([^)]*\)\s+(.*)", row)
        if not m or m.group(2) == "(TOTAL)":
            continue
        name = re.sub(r"bench_(plain|skills)", "crate", m.group(2))
        name = re.sub(r"(In|Out|Err|search_)\d+\b", r"\1N", name)
        # The body: a skill's is a function of its own, a plain function's the
        # function itself (its name alone, or its future's closures).
        name = name.replace("crate::_::__skill_body_search_N", "body")
        name = "body" if name == "crate::search_N" else name.replace("crate::search_N::{{", "body::{{")
        lines[name] += int(m.group(1))
    return lines


def main_llvm_lines(n):
    if shutil.which("cargo-llvm-lines") is None:
        print("installing cargo-llvm-lines from crates.io ...", flush=True)
        subprocess.run(["cargo", "install", "-q", "--locked", "cargo-llvm-lines"], check=True)
    ct.write_workspace(n)
    plain, skills = llvm_lines("bench-plain"), llvm_lines("bench-skills")
    total = lambda c: sum(c.values()) / n
    print(f"N = {n}; lines of LLVM IR per function: plain {total(plain):.0f}, "
          f"full skill {total(skills):.0f}, added {total(skills) - total(plain):.0f}")
    added = sorted(((skills[k] - plain[k]) / n, k) for k in set(plain) | set(skills))
    for per, name in reversed(added):
        if abs(per) >= 2:
            print(f"  {per:7.1f}  {name[:150]}")


def main():
    counts = [a for a in sys.argv[1:] if a.isdigit()]
    n = int(counts[0]) if counts else 50
    if "--llvm-lines" in sys.argv[1:]:
        return main_llvm_lines(n)
    print(f"N = {n}; instructions of each crate's rustc (cachegrind), in {ct.WORK}", flush=True)
    ct.write_workspace(n)
    plain_src = ct.WORK / "plain" / "src" / "lib.rs"
    skills_src = ct.WORK / "skills" / "src" / "lib.rs"
    for pkg in ("bench-plain", "bench-skills"):
        ct.cargo("build", "-q", "-p", pkg)
    r = {}
    r["plain"] = measure("plain async fns", "bench-plain")
    plain_src.write_text(plain_src.read_text().replace("pub async fn search_", "async fn search_"))
    r["private"] = measure("plain, private (bodies checked, not compiled)", "bench-plain")
    r["macro"] = measure("full skills, #[skill]")
    skills_src.write_text(written_out(n))
    r["hand"] = measure("full skills, written out")
    left = []
    for piece, label in (("registration", "  without the registration"),
                         ("caller", "  ... and the direct-call function"),
                         ("conditions", "  ... and the conditions and effect assertion"),
                         ("manifest", "  ... and the manifest's fields"),
                         ("grants", "  ... and the capability grants")):
        left.append(piece)
        skills_src.write_text(written_out(n, left))
        r[piece] = measure(label)
    # What is left, piece by piece: the failure modes written out (so the
    # derive's own run), then without `impl Skill`, the marker type, the
    # failure modes' impl. What remains then is paid once per crate (the
    # runtime's prelude and metadata, the capability's attribute), spread here
    # over N.
    src = written_out(n, left)
    for key, label, step in (("failure-hand", "  ... with the failure modes written out", failure_by_hand),
                             ("impl", "  ... and without `impl Skill`", without_impl_skill),
                             ("marker", "  ... and without the marker type", without_marker),
                             ("failure", "  ... and without the failure modes", without_failure_modes)):
        src = step(src, n)
        skills_src.write_text(src)
        r[key] = measure(label)
    try:
        for arms, key in (((), "typed-none"), (("decode",), "typed-decode"),
                          (("run",), "typed-run"), (("encode",), "typed-encode")):
            ct.ROOT = runtime_copy(arms)
            ct.write_workspace(n)
            skills_src.write_text(written_out(n))
            r[key] = measure("written out, typed code: " + (", ".join(arms) or "none"))
    finally:
        ct.ROOT = REPO
        ct.write_workspace(n)
        shutil.rmtree(REPO / "target" / "bench-variant", ignore_errors=True)

    per = lambda a, b: (r[a] - r[b]) / n / 1e6
    print(f"\nper skill, M instructions (N = {n}):")
    rows = [
        ("over plain, in all", per("macro", "plain")),
        ("the #[skill] macro's own run", per("macro", "hand")),
        ("the bodies' code (the plain crate compiles it too)", per("plain", "private")),
        ("the registration, bodies' code included", per("hand", "registration")),
        ("  decoding the input (typed code)", per("typed-decode", "typed-none")),
        ("  running the handler, bodies' code included", per("typed-run", "typed-none")),
        ("  encoding the output", per("typed-encode", "typed-none")),
        ("  the rest: entry constant, statics, condition checks", per("typed-none", "registration")),
        ("the items, checked, without code", per("registration", "private")),
        ("  the direct-call function", per("registration", "caller")),
        ("  the conditions and the effect assertion", per("caller", "conditions")),
        ("  the manifest's fields", per("conditions", "manifest")),
        ("  the capability grants", per("manifest", "grants")),
        ("  the rest: marker, impl Skill, failure modes", per("grants", "private")),
        ("    the failure modes derive's own run", per("grants", "failure-hand")),
        ("    `impl Skill`", per("failure-hand", "impl")),
        ("    the marker type", per("impl", "marker")),
        ("    the failure modes' impl", per("marker", "failure")),
        ("    paid once per crate, spread over N", per("failure", "private")),
    ]
    for label, v in rows:
        print(f"  {label:<58} {v:7.1f}")


if __name__ == "__main__":
    main()
