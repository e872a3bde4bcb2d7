import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (apt install chromium); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The viewports every page is tested at: a phone and a desktop. */
export const VIEWPORTS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 800 },
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
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  return { browser };
}
