// Renders media/icon.svg to the 128×128 media/icon.png the Marketplace and the Extensions view show.
// Run it after changing the SVG (`node scripts/render-icon.mjs`); the PNG is committed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from './lib/browser.mjs';
import { repoRoot } from './lib/vscodeServer.mjs';

const svg = readFileSync(join(repoRoot, 'media/icon.svg'), 'utf8');
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: join(repoRoot, 'media/icon.png'), omitBackground: true });
} finally {
  await browser.close();
}
