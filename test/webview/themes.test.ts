// The panel in VS Code's light, dark and high-contrast themes, checked on the pixels a user sees: the
// screenshot (also saved to out/screenshots for a person) is decoded, and the colours inside each
// element's box are compared with the theme's own and with WCAG's contrast minimum.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Locator } from 'playwright-core';
import { launch, openPanel, serve } from './harness';
import { colours, contrast, decodePng, distance, hex, luminance, pixel, type Image, type Rgb } from './pixels';
import { connected, sessions, state } from './states';
import { THEMES } from './themes';

const SHOTS = resolve(__dirname, '../../out/screenshots');
const MiB = 1024 * 1024;
/** Anti-aliasing and colour management move a channel by a few steps. */
const CLOSE = 6;

async function box(locator: Locator) {
  const found = await locator.boundingBox();
  assert.ok(found, 'the element is on screen');
  return found;
}

/** The colour covering most of a box (its background), and the one that stands out most from it (its text). */
function backgroundAndInk(image: Image, area: { x: number; y: number; width: number; height: number }) {
  const found = colours(image, area);
  const background = found[0]!.colour;
  const ink = found.reduce<Rgb>(
    (best, { colour }) => (contrast(colour, background) > contrast(best, background) ? colour : best),
    background,
  );
  return { background, ink, share: found[0]!.share };
}

describe('the Sandbox panel in each theme, on screen', function () {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;
  const seen: Record<string, { background: Rgb }> = {};

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await serve();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    it(`${theme}: the theme's background, legible text, the primary button in the theme's colour, full meters`, async () => {
      const colors = THEMES[theme];
      const panel = await openPanel(browser, server.url, {
        theme,
        state: { newRuntime: 'python', defaultsOpen: true },
      });
      const { page } = panel;
      await panel.send(state(connected, sessions));
      await panel.send({
        type: 'stats',
        stats: { id: 'a'.repeat(64), cpuPercent: 37, memoryBytes: 128 * MiB, memoryLimitBytes: 512 * MiB },
      });
      await panel.send({
        type: 'stats',
        stats: { id: 'b'.repeat(64), cpuPercent: 4, memoryBytes: 470 * MiB, memoryLimitBytes: 512 * MiB },
      });
      const png = await page.screenshot({ fullPage: true });
      writeFileSync(join(SHOTS, `panel-${theme}.png`), png);
      const image = decodePng(png);

      // The page is the theme's panel background (top left, outside every section).
      const corner = pixel(image, 2, 2);
      assert.ok(distance(corner, hex(colors['panel-background']!)) <= CLOSE, `background ${corner} is the theme's`);
      seen[theme] = { background: corner };

      // Headings and the session names are drawn in a colour that reads against what is behind them.
      for (const text of [
        page.getByRole('heading', { name: 'Sessions (3)' }),
        page.getByRole('listitem', { name: 'Session build, idle' }).getByText('build', { exact: true }),
        page.getByRole('listitem', { name: 'Session default, running' }).getByText('python3 analyze.py data.csv'),
        page.getByRole('textbox', { name: 'Memory' }),
      ]) {
        const { background, ink } = backgroundAndInk(image, await box(text));
        assert.ok(
          contrast(ink, background) >= 4.5,
          `${await text.innerText().catch(() => 'text')}: ${ink} on ${background} is ${contrast(ink, background).toFixed(1)}:1, under 4.5:1`,
        );
      }

      // The primary button is filled with the theme's button colour, its label legible on it.
      const save = await box(page.getByRole('button', { name: 'Save the default limits to settings' }));
      const button = backgroundAndInk(image, save);
      assert.ok(
        distance(button.background, hex(colors['button-background']!)) <= CLOSE,
        `Save Defaults is ${button.background}, the theme's button is ${colors['button-background']}`,
      );
      assert.ok(
        contrast(button.ink, button.background) >= 4.5,
        `Save Defaults label ${button.ink} on ${button.background}`,
      );

      // A meter's fill covers its share: 470 MiB of 512 MiB is most of the bar, 128 MiB a quarter.
      const filled = async (name: string) => {
        const bar = await box(page.getByRole('meter', { name }));
        const row = { ...bar, y: bar.y + bar.height / 2, height: 1 };
        const track = pixel(image, bar.x + bar.width - 2, row.y);
        const fill = pixel(image, bar.x + 2, row.y);
        assert.ok(distance(track, fill) > CLOSE, `${name}: the fill stands out from the track`);
        const across = colours(image, row).filter(({ colour }) => distance(colour, fill) <= CLOSE);
        return across.reduce((sum, { share }) => sum + share, 0);
      };
      const high = await filled('Memory: 470 MiB of 512 MiB');
      const quarter = await filled('Memory: 128 MiB of 512 MiB');
      assert.ok(high > 0.85 && high < 0.97, `470 of 512 MiB fills ${(high * 100).toFixed(0)}% of the bar`);
      assert.ok(quarter > 0.2 && quarter < 0.3, `128 of 512 MiB fills ${(quarter * 100).toFixed(0)}% of the bar`);
    });
  }

  it('light is light and dark is dark', () => {
    assert.ok(seen.light && seen.dark && seen['high-contrast'], 'the theme cases ran');
    assert.ok(luminance(seen.light.background) > 0.8, `light background ${seen.light.background}`);
    assert.ok(luminance(seen.dark.background) < 0.05, `dark background ${seen.dark.background}`);
    assert.ok(luminance(seen['high-contrast'].background) < 0.01, 'high contrast is black');
  });
});
