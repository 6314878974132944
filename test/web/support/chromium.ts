import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (never `playwright`, whose install downloads a browser
 * build of its own). The browser is a system package: `apt-get install -y chromium` (.ci/run does it).
 */

/** Where Debian installs it; `CHROMIUM_PATH` may point elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags the team runs Chromium with: headless, no sandbox (root in CI), nothing phoning home. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** A running browser with its own fresh profile, removed at close. */
export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh `--user-data-dir` (a persistent context on a new temporary folder:
 * Playwright takes the profile folder as a parameter, not as a flag).
 * @throws Error saying how to install Chromium when it is missing: browser tests fail, never skip.
 */
export async function launchChromium(opts: { colorScheme?: 'light' | 'dark'; executablePath?: string } = {}): Promise<Chromium> {
  const executablePath = opts.executablePath ?? CHROMIUM_PATH;
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium is not installed at ${executablePath}, and the dashboard's browser tests need it. ` +
        "Install Debian's package: `apt-get install -y chromium` (as root; .ci/run does this), or set CHROMIUM_PATH to a Chromium binary.",
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'modelmux-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      chromiumSandbox: false,
      args: [...CHROMIUM_FLAGS],
      viewport: { width: 1280, height: 900 },
      colorScheme: opts.colorScheme ?? 'light',
      locale: 'en-US',
      timezoneId: 'UTC',
      acceptDownloads: true,
    });
    return {
      context,
      close: async () => {
        await context.close().catch(() => undefined);
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
