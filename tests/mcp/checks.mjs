// The checks the client scripts share: each passed check printed as
// `ok: ...`, the first failed one printed and the process ended non-zero.

export function fail(what) {
  console.error(`FAIL: ${what}`);
  process.exit(1);
}

export function check(condition, what) {
  if (!condition) fail(what);
  console.log(`ok: ${what}`);
}
