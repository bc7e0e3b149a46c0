//! The compile-time contract of the macros: every case in `tests/ui/fail` must
//! fail with exactly its `.stderr`, every case in `tests/ui/pass` must compile
//! and run. One trybuild invocation, so the cases share one build.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*/*.rs");
}
