import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium; never a downloaded browser. */
export const CHROMIUM = process.env.BABELQUEUE_CHROMIUM ?? '/usr/bin/chromium';

/** Where browser tests save their screenshots (git-ignored). */
export const ARTIFACTS = join(import.meta.dirname, '..', '..', '..', '..', 'artifacts', 'console');

/** The browser suite: skipped with a loud line when Chromium is missing, failed under CI=true. */
export function browserSuite(): { skip: string | false } {
  if (existsSync(CHROMIUM)) return { skip: false };
  const why = `${CHROMIUM} is missing; install Debian's chromium (scripts/browser)`;
  if (process.env.CI === 'true') throw new Error(`the console's browser suite cannot run under CI=true: ${why}`);
  process.stderr.write(`\n*** SKIPPED: console browser suite — ${why} ***\n\n`);
  return { skip: `SKIPPED: ${why}` };
}

/**
 * Headless Chromium with a fresh profile (Playwright passes it as
 * `--user-data-dir`); `close` removes the profile.
 */
export async function launch(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'bq-console-chromium-'));
  mkdirSync(ARTIFACTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
