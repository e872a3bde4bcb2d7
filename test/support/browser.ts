import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Debian's Chromium (apt install chromium); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The viewports every page is tested at: a phone and a desktop. */
export const VIEWPORTS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1366, height: 900 },
} as const;

/**
 * Launches headless Chromium, or says clearly why browser tests are skipped. In CI a missing
 * browser is an error: the browser tests must run there (`.ci/run` installs it).
 */
export async function launchBrowser(): Promise<{ browser: Browser } | { skip: string }> {
  if (!existsSync(CHROMIUM_PATH)) {
    const reason = `browser tests skipped: no Chromium at ${CHROMIUM_PATH} (install Debian's chromium, or set CHROMIUM_PATH)`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI must run them`);
    console.log(`# ${reason}`);
    return { skip: reason };
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  return { browser };
}

/** The axe-core rule sets every page is checked against. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] as const;

/**
 * axe-core's violations of the WCAG 2.2 AA and best-practice rules on the page, whatever their
 * impact, as "rule (impact): target" lines.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(
    async (tags) => {
      const axe = (
        globalThis as unknown as {
          axe: {
            run(
              options: unknown,
            ): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }>;
          };
        }
      ).axe;
      const result = await axe.run({ runOnly: { type: 'tag', values: tags } });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        targets: v.nodes.map((n) => JSON.stringify(n.target)),
      }));
    },
    AXE_TAGS as unknown as string[],
  );
  return violations.map((v) => `${v.id} (${v.impact ?? 'none'}): ${v.targets.join(', ')}`);
}

/** Where the browser tests leave their screenshots for the README and docs (`npm run screenshots` sets it). */
const SCREENSHOT_DIR = process.env.CASHGATE_SCREENSHOT_DIR;

/** Saves a full-page screenshot as `<name>.png` when CASHGATE_SCREENSHOT_DIR is set; otherwise nothing. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  if (SCREENSHOT_DIR === undefined) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** What a payer's page may weigh, everything it loads included. */
export const PAGE_BUDGET_BYTES = 60 * 1024;

/** Loads `url`, counting every byte of every response on the way (the page and anything it loads). */
export async function loadCounted(page: Page, url: string): Promise<{ status: number | undefined; bytes: number }> {
  const responses: Promise<number>[] = [];
  const count = (response: Response) => {
    responses.push(
      response
        .request()
        .sizes()
        .then((s) => s.responseBodySize + s.responseHeadersSize),
    );
  };
  page.on('response', count);
  const response = await page.goto(url, { waitUntil: 'load' });
  page.off('response', count);
  const sizes = await Promise.all(responses);
  return { status: response?.status(), bytes: sizes.reduce((a, b) => a + b, 0) };
}

/** What every payer's page must be: within budget, without serious accessibility problems. */
export async function checkPageQuality(page: Page, loaded: { bytes: number }, label: string): Promise<void> {
  if (loaded.bytes > 0) console.log(`# ${label}: ${loaded.bytes} bytes transferred`);
  assert.ok(
    loaded.bytes <= PAGE_BUDGET_BYTES,
    `${label}: ${loaded.bytes} bytes transferred, over the ${PAGE_BUDGET_BYTES}-byte budget`,
  );
  assert.deepEqual(await axeViolations(page), [], `${label}: accessibility`);
}
