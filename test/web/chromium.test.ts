import { describe, expect, it } from 'vitest';
import { launchChromium } from './support/chromium';

describe('the browser the dashboard tests drive', () => {
  it('fails (never skips) with the install command when Chromium is missing', async () => {
    await expect(launchChromium({ executablePath: '/nonexistent/chromium' })).rejects.toThrow(
      /Chromium is not installed at \/nonexistent\/chromium.*apt-get install -y chromium/,
    );
  });
});
