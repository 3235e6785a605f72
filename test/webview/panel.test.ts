import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { launch, openPanel, serve } from './harness';
import { connected, noEngine, sessions, state } from './states';

const SHOTS = resolve(__dirname, '../../out/screenshots');

describe('the Sandbox panel in Chromium', function () {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serve>>;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await serve();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('says what is wrong with the engine and how to fix it, with a working Retry', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(noEngine, []));
    const text = await panel.page.locator('.engine').innerText();
    assert.match(text, /not reachable/);
    assert.match(text, /the socket does not exist/);
    assert.match(text, /Start Docker/);
    await panel.page.click('[data-action="retry-engine"]');
    await panel.page.click('[data-action="show-log"]');
    const posted = (await panel.posted()).map((message) => message.type);
    assert.deepEqual(posted.slice(-2), ['retryEngine', 'showLog']);
    await panel.page.screenshot({ path: join(SHOTS, 'panel-no-engine-dark.png') });
  });

  it('shows an empty state and opens a session', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, []));
    assert.match(await panel.page.locator('.sessions').innerText(), /No sessions are open/);
    assert.match(await panel.page.locator('.engine').innerText(), /Docker Engine 20\.10\.24.*connected/s);
    await panel.page.click('[data-action="open-session"]');
    assert.deepEqual((await panel.posted()).at(-1), { type: 'openSession', name: 'default', runtime: 'python' });
  });

  it('shows three sessions, including a dead one and a read-write one, and every action posts its message', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, sessions));
    const cards = panel.page.locator('.card');
    assert.equal(await cards.count(), 3);
    const dead = panel.page.locator('[data-session="agent:analyst/default"]');
    assert.match(await dead.innerText(), /dead/);
    assert.match(await dead.innerText(), /ran out of memory \(limit 512 MiB\)/);
    assert.equal(await dead.locator('[data-action="open-terminal"]').count(), 0, 'no terminal into a dead session');
    const build = panel.page.locator('[data-session="build"]');
    assert.equal(await build.locator('[data-badge="access"]').innerText(), 'workspace: read-write');
    assert.equal(await build.locator('[data-badge="network"]').innerText(), 'network: on');
    assert.match(await build.innerText(), /npm test\s*→ exit 1/);
    assert.match(await panel.page.locator('[data-session="default"]').innerText(), /workspace: read-only/);

    await build.locator('[data-action="open-terminal"]').click();
    await build.locator('[data-action="restart-session"]').click();
    await dead.locator('[data-action="close-session"]').click();
    await panel.page.evaluate(() => {
      const dropdown = document.querySelector(
        '[data-session="default"] [data-action="set-access"]',
      ) as HTMLSelectElement;
      dropdown.value = 'rw';
      dropdown.dispatchEvent(new Event('change'));
    });
    assert.deepEqual((await panel.posted()).slice(-4), [
      { type: 'openTerminal', sandboxId: 'build' },
      { type: 'restartSession', sandboxId: 'build' },
      { type: 'closeSession', sandboxId: 'agent:analyst/default' },
      { type: 'setAccess', sandboxId: 'default', access: 'rw' },
    ]);
    assert.match(await panel.page.locator('.activity').innerText(), /python3 analyze\.py data\.csv/);
  });

  it('updates live CPU and memory in place', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, sessions));
    await panel.page.focus('[data-session="build"] [data-action="restart-session"]');
    await panel.send({
      type: 'stats',
      stats: {
        id: 'a'.repeat(64),
        cpuPercent: 37,
        memoryBytes: 128 * 1024 * 1024,
        memoryLimitBytes: 512 * 1024 * 1024,
      },
    });
    const memory = panel.page.locator('[data-session="default"] [role="meter"]').nth(1);
    assert.equal(await memory.getAttribute('aria-valuenow'), '25');
    assert.match(
      await panel.page.locator('[data-session="default"] .usage').innerText(),
      /37% of 1 CPU[\s\S]*128 MiB of 512 MiB/,
    );
    const focused = await panel.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.action);
    assert.equal(focused, 'restart-session', 'a stats update does not move the focus');
  });

  it('validates the defaults before saving them', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, []));
    await panel.page.click('[data-action="toggle-defaults"]');
    const memory = panel.page.locator('[data-field="memory"]');
    await memory.evaluate((element) => {
      (element as HTMLInputElement).value = 'lots';
    });
    await panel.page.click('[data-action="save-defaults"]');
    assert.match(
      await panel.page.locator('#default-memory-error').innerText(),
      /Memory must be a size like 512m or 1g/,
    );
    assert.equal(
      (await panel.posted()).some((message) => message.type === 'saveDefaults'),
      false,
    );
    await memory.evaluate((element) => {
      (element as HTMLInputElement).value = '1g';
    });
    await panel.page.locator('[data-field="cpus"]').evaluate((element) => {
      (element as HTMLInputElement).value = '2';
    });
    await panel.page.click('[data-action="save-defaults"]');
    const saved = (await panel.posted()).at(-1);
    assert.deepEqual(saved, {
      type: 'saveDefaults',
      defaults: {
        memory: '1g',
        cpus: 2,
        pids: 256,
        timeoutSeconds: 120,
        maxStdoutBytes: 1048576,
        maxStderrBytes: 1048576,
        workspaceAccess: 'none',
        network: false,
        target: 'user',
      },
    });
  });

  it('reaches every action with the keyboard alone, each with a label', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, sessions));
    const reached = new Set<string>();
    for (let i = 0; i < 60; i++) {
      await panel.page.keyboard.press('Tab');
      const info = await panel.page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        const card = element?.closest('[data-session]') as HTMLElement | null;
        return element
          ? {
              action: element.dataset.action,
              session: card?.dataset.session,
              label: element.getAttribute('aria-label') ?? element.textContent?.trim(),
            }
          : undefined;
      });
      if (info?.action) {
        assert.ok(info.label, `${info.action} has a label`);
        reached.add(`${info.session ?? ''}:${info.action}`);
      }
    }
    for (const expected of [
      ':toggle-defaults',
      'default:open-terminal',
      'default:set-access',
      'default:restart-session',
      'default:close-session',
      'build:open-terminal',
      'agent:analyst/default:close-session',
      ':open-session',
    ]) {
      assert.ok(reached.has(expected), `${expected} is reachable by Tab (reached: ${[...reached].join(', ')})`);
    }
    await panel.page.focus('[data-session="build"] [data-action="close-session"]');
    await panel.page.keyboard.press('Enter');
    assert.deepEqual((await panel.posted()).at(-1), { type: 'closeSession', sandboxId: 'build' });
  });

  it('keeps its UI state across a reload, and only UI state', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, []));
    await panel.page.evaluate(() => {
      const dropdown = document.querySelector('[data-field="new-runtime"]') as HTMLSelectElement;
      dropdown.value = 'bash';
      dropdown.dispatchEvent(new Event('change'));
    });
    const saved = await panel.savedState();
    assert.deepEqual(
      saved,
      { newRuntime: 'bash', defaultsOpen: false },
      'only UI state: no sessions, engine or defaults',
    );
    const again = await openPanel(browser, server.url, { state: saved });
    await again.send(state(connected, []));
    await again.page.click('[data-action="open-session"]');
    assert.deepEqual((await again.posted()).at(-1), { type: 'openSession', name: 'default', runtime: 'bash' });
  });

  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    it(`renders in the ${theme} theme (screenshot in out/screenshots)`, async () => {
      const panel = await openPanel(browser, server.url, {
        theme,
        state: { newRuntime: 'python', defaultsOpen: true },
      });
      await panel.send(state(connected, sessions));
      await panel.send({
        type: 'stats',
        stats: {
          id: 'a'.repeat(64),
          cpuPercent: 37,
          memoryBytes: 128 * 1024 * 1024,
          memoryLimitBytes: 512 * 1024 * 1024,
        },
      });
      await panel.send({
        type: 'stats',
        stats: {
          id: 'b'.repeat(64),
          cpuPercent: 4,
          memoryBytes: 470 * 1024 * 1024,
          memoryLimitBytes: 512 * 1024 * 1024,
        },
      });
      await panel.page.waitForTimeout(200);
      await panel.page.screenshot({ path: join(SHOTS, `panel-${theme}.png`), fullPage: true });
    });
  }
});
