// The console in a real browser (the system's Chromium, driven by
// playwright-core): tests/console.rs starts a Redis, a worker, the console
// behind API keys, and queues the jobs; this script is the people.
//
//   node console.mjs BASE ANN_KEY BOB_KEY APPROVE_ID DENY_ID FORGED_ID SLOW_ID DURABLE_ID DEAD_JOB_ID
//                    DELAYED_ID
//
// ann is an admin: she signs in, approves one parked job, denies
// another with a reason, watches count_slowly's progress move without
// reloading, and opens the approved job's run. bob may read only: he sees no
// buttons, and a post he forges (with his own valid form token) is refused
// 403. Any error in a page's console fails the run. It prints one line per
// check, then `ok: the console`.

import { chromium } from "playwright-core";

const [base, annKey, bobKey, approveId, denyId, forgedId, slowId, durableId, deadJobId, delayedId] =
  process.argv.slice(2);
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

function check(ok, what) {
  if (!ok) throw new Error(`failed: ${what}`);
  console.log(`ok: ${what}`);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  // CI runs as root, where Chromium's sandbox cannot start.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const problems = [];

async function personPage(key) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  await page.goto(`${base}/queue`);
  check((await page.title()).startsWith("Sign in"), "a person without a key is asked to sign in");
  await page.fill("input[name=credential]", key);
  await Promise.all([page.waitForNavigation(), page.click("form[action$='/login'] button")]);
  return page;
}

/// The row of the parked job `id` on the queue page.
function rowOf(page, id) {
  return page.locator("tr", { has: page.locator(`code:text-is("${id}")`) });
}

try {
  // ann decides.
  const ann = await personPage(annKey);
  await ann.goto(`${base}/queue`);
  check((await ann.locator(".who").textContent()) === "ann", "ann is signed in by her key");
  const what = await rowOf(ann, denyId).textContent();
  check(
    what.includes("rag_cache_purge") && what.includes("knowledge:diagnostic"),
    "a parked job shows its skill and its input",
  );
  await Promise.all([
    ann.waitForNavigation(),
    rowOf(ann, approveId).locator("button.approve").click(),
  ]);
  const approved = await ann.locator("[role=status]").textContent();
  check(approved.includes(approveId) && approved.includes("approved"), `the page says ${approveId} is approved`);
  const denyRow = rowOf(ann, denyId);
  await denyRow.locator("input[name=reason]").fill("not during the sale");
  await Promise.all([ann.waitForNavigation(), denyRow.locator("button.deny").click()]);
  const denied = await ann.locator("[role=status]").textContent();
  check(denied.includes(denyId) && denied.includes("denied"), `the page says ${denyId} is denied`);
  check((await rowOf(ann, approveId).count()) === 0, "the approved job no longer waits");

  // A delayed job, and the workers with their heartbeats.
  check(/\(in 5\d min\)/.test(await rowOf(ann, delayedId).textContent()), "a delayed job is listed with when it is due");
  check(/\(in \d+ s\)/.test(await ann.locator("#workers td").nth(1).textContent()), "the workers' heartbeats are shown");

  // A dead letter's job sent again.
  await Promise.all([
    ann.waitForNavigation(),
    rowOf(ann, deadJobId).locator("button", { hasText: "Retry" }).click(),
  ]);
  const retried = await ann.locator("[role=status]").textContent();
  check(retried.includes("is sent again as job"), "a dead letter's job is sent again from the page");
  check((await rowOf(ann, deadJobId).count()) === 0, "it leaves the dead letters");

  // Progress moves on the page, without a reload.
  const slow = ann.locator("#running tr", { has: ann.locator(`code:text-is("${slowId}")`) });
  await slow.waitFor({ timeout: 20000 });
  const at = async () => Number(await slow.locator("[role=progressbar]").getAttribute("aria-valuenow"));
  const first = await at();
  await ann.waitForFunction(
    ([id, was]) => {
      const row = [...document.querySelectorAll("#running tr")].find((r) => r.textContent.includes(id));
      const bar = row && row.querySelector("[role=progressbar]");
      return bar && Number(bar.getAttribute("aria-valuenow")) > was;
    },
    [slowId, first],
    { timeout: 10000 },
  );
  check((await at()) > first, `count_slowly's progress moved on the page (from ${first})`);

  // The approved job's run names who approved it (asked for apart from the
  // page until its record is stored, so that no 404 reaches the page).
  for (let i = 0; i < 60; i++) {
    if ((await ann.request.get(`${base}/runs/${approveId}`)).status() === 200) break;
    await ann.waitForTimeout(500);
  }
  await ann.goto(`${base}/runs/${approveId}`);
  const run = await ann.locator("main").textContent();
  check(run.includes("approved by ann"), "the run's approval stage names ann");
  check(run.includes("succeeded"), "the approved job succeeded");
  await ann.goto(`${base}/runs?status=failed`);
  check((await ann.locator("main").textContent()).includes(denyId), "the denied job is among the failed runs");
  // A durable run's nodes, on its timeline.
  await ann.goto(`${base}/pipelines`);
  await Promise.all([ann.waitForNavigation(), ann.click(`a:has-text("${durableId}")`)]);
  check((await ann.title()).startsWith(`Durable run ${durableId}`), "the durable run opens from the list");
  const nodes = await ann.locator("svg.timeline rect[data-node]").count();
  check(nodes >= 3, `the durable run's timeline draws its nodes (${nodes})`);
  await ann.goto(`${base}/stats`);
  check((await ann.locator("svg.per-skill rect").count()) > 0, "the latency per skill is drawn");
  check((await ann.locator("svg.over-time polyline").count()) === 3, "p50, p95 and p99 over time are drawn");
  check((await ann.locator("h2", { hasText: "Agents' KPIs" }).count()) === 1, "the agents' KPIs are listed");

  // bob reads only.
  const bob = await personPage(bobKey);
  await bob.goto(`${base}/queue`);
  check((await bob.locator(".who").textContent()) === "bob", "bob is signed in by his key");
  check((await rowOf(bob, forgedId).count()) === 0, "bob does not see the jobs that wait, only their counts");
  check((await bob.locator("button.approve, button.deny").count()) === 0, "bob gets no buttons");
  // Checked before the forgeries, whose 403s Chromium logs as errors.
  check(problems.length === 0, `no page errors (${problems.join("; ")})`);
  const token = await bob.locator("input[name=csrf]").first().getAttribute("value");
  const forged = await bob.evaluate(
    async ([url, csrf]) => {
      const r = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `csrf=${csrf}`,
      });
      return r.status;
    },
    [`${base}/queue/${forgedId}/approve`, token],
  );
  check(forged === 403, `bob's forged approval is refused (${forged})`);
  const tokenless = await ann.evaluate(async (url) => {
    const r = await fetch(url, { method: "POST", body: "reason=x" });
    return r.status;
  }, `${base}/queue/${forgedId}/deny`);
  check(tokenless === 403, `a post without the form's token is refused (${tokenless})`);
  console.log("ok: the console");
} finally {
  await browser.close();
}
