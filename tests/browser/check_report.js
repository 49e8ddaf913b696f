// Opens a chaintrace HTML report in headless Debian Chromium through playwright-core (both
// installed, pinned, by scripts/install-test-tools.sh) and checks what a reader sees. Run by
// tests/html_report.rs:
//
//   node tests/browser/check_report.js REPORT.html OUT_DIR EXPECTED_LOCATION
//
// Prints one JSON object on stdout: {checks: {...}, requests: [...], errors: [...]}, and saves
// OUT_DIR/report.png (full page) and OUT_DIR/report.pdf (print). Exits non-zero when Chromium
// cannot start or a step throws; the Rust test asserts on the JSON.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { pathToFileURL } = require("url");

const root = path.resolve(__dirname, "..", "..");
const { chromium } = require(path.join(root, ".tools", "js", "node_modules", "playwright-core"));

const [report, outDir, location] = process.argv.slice(2);
const CHROMIUM = process.env.CHAINTRACE_CHROMIUM || "/usr/bin/chromium";

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "chaintrace-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const url = pathToFileURL(path.resolve(report)).href;
  // Every request any page or frame makes, the report's own file included.
  const requests = [];
  const errors = [];
  context.on("request", (r) => requests.push(r.url()));
  await context.route("**/*", (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    return route.abort();
  });
  const page = context.pages()[0] || (await context.newPage());
  page.on("pageerror", (e) => errors.push("pageerror: " + e.message));
  page.on("console", (m) => {
    if (m.type() === "error" || /Content.Security.Policy/i.test(m.text())) {
      errors.push("console: " + m.text());
    }
  });
  await page.goto(url, { waitUntil: "load" });
  const checks = {};

  const reason = page.locator("#ct-reason");
  checks.reasonVisible = await reason.isVisible();
  checks.reason = await reason.innerText();
  const loc = page.locator("#ct-location");
  checks.locationVisible = await loc.isVisible();
  checks.location = await loc.innerText();
  checks.locationMatches = checks.location.includes(location);
  checks.stackEntries = await page.locator("#ct-stack > li").count();

  // A frame that starts collapsed: its body is hidden; a click on its line opens it.
  checks.collapsedFrames = await page.locator("details.f:not([open])").count();
  const framePath = await page.locator("details.f:not([open])").first().getAttribute("data-path");
  checks.clickedFrame = framePath;
  const collapsed = page.locator(`details.f[data-path="${framePath}"]`);
  const body = collapsed.locator(":scope > .body");
  checks.bodyHiddenBefore = !(await body.isVisible());
  await collapsed.locator(":scope > summary").click();
  checks.openAfterClick = (await collapsed.getAttribute("open")) !== null;
  checks.bodyVisibleAfter = await body.isVisible();

  // The flamegraph: inferno's SVG in its frame, zooming on click.
  const flame = page.frameLocator("#ct-flame");
  checks.flameFrames = await flame.locator("#frames > g").count();
  checks.unzoomHiddenBefore = (await flame.locator("#unzoom").getAttribute("class")).includes("hide");
  await flame.locator("#frames > g").last().click();
  checks.unzoomShownAfterClick = !(await flame.locator("#unzoom").getAttribute("class")).includes("hide");

  // Sections a reader looks for.
  for (const id of ["ct-check", "ct-calls", "ct-assets", "ct-diff", "ct-gas", "ct-cmd"]) {
    checks["section_" + id] = await page.locator("#" + id).isVisible();
  }

  fs.mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: path.join(outDir, "report.png"), fullPage: true });
  // Printing opens every frame (beforeprint) and puts the reader's view back afterwards: the
  // frame opened above is closed again first, and counted while the page prints.
  await collapsed.locator(":scope > summary").click();
  checks.collapsedBeforePrint = await page.locator("details.f:not([open])").count();
  await page.evaluate(() => {
    window.addEventListener("beforeprint", () => {
      window.ctCollapsedWhilePrinting = document.querySelectorAll("details.f:not([open])").length;
    });
  });
  const pdf = await page.pdf({ path: path.join(outDir, "report.pdf"), format: "A4" });
  checks.pdfBytes = pdf.length;
  checks.collapsedWhilePrinting = await page.evaluate(() => window.ctCollapsedWhilePrinting);
  checks.collapsedAfterPrint = await page.locator("details.f:not([open])").count();

  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ checks, requests, errors, url }) + "\n");
})().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
