// The built panel in Chromium, as a user meets it: what each message from the host shows (text, roles,
// states, read through the accessibility tree), what each click asks of the host, and what the panel
// shows once the host answers. The test plays the host: it posts the messages the extension posts.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import type { SessionView } from '../../src/shared/protocol';
import { launch, openPanel, serve, settled, type PanelPage } from './harness';
import { barChartPng } from './chartPng';
import { connected, defaults, noEngine, sessions, state } from './states';

const SHOTS = resolve(__dirname, '../../out/screenshots');
const MiB = 1024 * 1024;

const region = (page: Page, name: string | RegExp) => page.getByRole('region', { name });
const card = (page: Page, name: string) => page.getByRole('listitem', { name });
const toast = (page: Page) => page.locator('.toast[role="status"]');
const visible = (locator: Locator) => locator.isVisible();

/** What a dropdown shows as chosen, as the accessibility tree reads it (the text is in its shadow DOM). */
async function shown(combobox: Locator): Promise<string> {
  const line = (await combobox.ariaSnapshot()).split('\n')[0]!;
  return /^- combobox "[^"]*"(?: \[[^\]]*\])*: (.*)$/.exec(line)?.[1] ?? `(nothing in ${line})`;
}

/** The last message the panel posted to the host. */
async function lastPosted(panel: PanelPage) {
  return (await panel.posted()).at(-1);
}

/** Picks a value in a dropdown with the mouse, as a user does. */
async function choose(page: Page, combobox: string, option: string): Promise<void> {
  const box = page.getByRole('combobox', { name: combobox });
  await box.click();
  await box.getByRole('option', { name: option, exact: true }).click();
  await settled(page);
}

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

  it('says what is wrong with the engine and how to fix it; Retry asks the host, and the answer shows', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(noEngine, []));
    const engine = region(page, 'Engine');
    assert.equal(await engine.getByRole('status').innerText(), 'not reachable');
    const alert = engine.getByRole('alert');
    assert.match(await alert.innerText(), /No Docker Engine answers at unix:\/\/\/var\/run\/docker\.sock/);
    assert.match(await alert.innerText(), /the socket does not exist/);
    assert.match(await alert.innerText(), /Start Docker/);

    await engine.getByRole('button', { name: 'Retry the engine connection' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'retryEngine' });
    await panel.send({ type: 'engine', engine: connected });
    await panel.send({
      type: 'result',
      action: 'retryEngine',
      ok: true,
      message: 'Connected to Docker Engine 20.10.24.',
    });
    assert.equal(await engine.getByRole('status').innerText(), 'connected');
    assert.match(await engine.innerText(), /Docker Engine 20\.10\.24/);
    assert.equal(await visible(engine.getByRole('alert')), false, 'the problem is gone');
    assert.equal(await engine.getByRole('button', { name: 'Retry the engine connection' }).count(), 0);
    assert.equal(await toast(page).innerText(), 'Connected to Docker Engine 20.10.24.');

    await panel.send({ type: 'engine', engine: noEngine });
    await engine.getByRole('button', { name: 'Show the Agent Sandbox log' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'showLog' });
  });

  it('shows an empty state, opens a session by name, and shows it once the host has opened it', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(connected, []));
    const list = region(page, 'Sessions (0)');
    assert.match(await list.innerText(), /No sessions are open/);
    assert.match(await region(page, 'Engine').innerText(), /Docker Engine 20\.10\.24.*connected/s);
    const name = page.getByRole('textbox', { name: 'Name of the new session' });
    assert.equal(await name.inputValue(), 'default', 'the name it suggests');

    await name.fill('analysis');
    await choose(page, 'Runtime of the new session', 'bash');
    await page.getByRole('button', { name: 'Open a new session' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'openSession', name: 'analysis', runtime: 'bash' });

    const opened: SessionView = { ...sessions[0]!, sandboxId: 'analysis', name: 'analysis', runtime: 'bash' };
    await panel.send({ type: 'sessions', sessions: [opened] });
    await panel.send({ type: 'result', action: 'openSession', ok: true, message: 'Opened session analysis.' });
    assert.equal(await visible(region(page, 'Sessions (1)')), true);
    const shown = card(page, 'Session analysis, running');
    assert.equal(await shown.getByRole('status').innerText(), 'running');
    assert.match(await shown.innerText(), /bash/);
    assert.equal(await toast(page).innerText(), 'Opened session analysis.');
    assert.equal(await visible(page.getByText('No sessions are open')), false);
  });

  it('shows each session as it is: dead with the reason, read-write with network, the last command', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(connected, sessions));
    assert.equal(await page.getByRole('listitem', { name: /^Session / }).count(), 3);

    const dead = card(page, 'Session agent:analyst/default, dead');
    assert.equal(await dead.getByRole('status').innerText(), 'dead');
    assert.match(await dead.getByRole('alert').innerText(), /ran out of memory \(limit 512 MiB\)/);
    assert.match(await dead.innerText(), /agent/, 'its scope');
    assert.equal(
      await dead.getByRole('button', { name: /Open a terminal/ }).count(),
      0,
      'no terminal into a dead session',
    );
    assert.equal(await dead.getByRole('combobox').count(), 0, 'no access change for a dead session');

    const build = card(page, 'Session build, idle');
    assert.match(await build.innerText(), /workspace: read-write/);
    assert.match(await build.innerText(), /network: on/);
    assert.match(await build.getByRole('paragraph').filter({ hasText: 'last:' }).innerText(), /npm test\s*→ exit 1/);
    const running = card(page, 'Session default, running');
    assert.match(await running.innerText(), /workspace: read-only/);
    assert.equal(await shown(running.getByRole('combobox', { name: 'Workspace access of default' })), 'ro');
    assert.match(await region(page, 'Activity').innerText(), /python3 analyze\.py data\.csv/);
  });

  it('asks the host for each action, and shows its answer', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(connected, sessions));

    await card(page, 'Session build, idle').getByRole('button', { name: 'Open a terminal in build' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'openTerminal', sandboxId: 'build' });

    await card(page, 'Session build, idle').getByRole('button', { name: 'Restart build (its files are lost)' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'restartSession', sandboxId: 'build' });
    await panel.send({ type: 'result', action: 'restartSession', ok: false, message: 'Session build is busy.' });
    assert.equal(await toast(page).innerText(), 'Session build is busy.');
    assert.match((await toast(page).getAttribute('class')) ?? '', /toast-bad/, 'shown as a failure');

    await card(page, 'Session agent:analyst/default, dead')
      .getByRole('button', { name: 'Close agent:analyst/default' })
      .click();
    assert.deepEqual(await lastPosted(panel), { type: 'closeSession', sandboxId: 'agent:analyst/default' });
    await panel.send({ type: 'sessions', sessions: sessions.slice(0, 2) });
    await panel.send({
      type: 'result',
      action: 'closeSession',
      ok: true,
      message: 'Closed session agent:analyst/default.',
    });
    assert.equal(await visible(region(page, 'Sessions (2)')), true);
    assert.equal(await card(page, 'Session agent:analyst/default, dead').count(), 0);
    assert.equal(await toast(page).innerText(), 'Closed session agent:analyst/default.');
    assert.match((await toast(page).getAttribute('class')) ?? '', /toast-ok/);

    await choose(page, 'Workspace access of default', 'rw');
    assert.deepEqual(await lastPosted(panel), { type: 'setAccess', sandboxId: 'default', access: 'rw' });
    const recreated = { ...sessions[0]!, id: 'd'.repeat(64), workspaceAccess: 'rw' as const };
    await panel.send({ type: 'sessions', sessions: [recreated, sessions[1]!] });
    const changed = card(page, 'Session default, running');
    assert.match(await changed.innerText(), /workspace: read-write/);
    assert.equal(await shown(changed.getByRole('combobox', { name: 'Workspace access of default' })), 'rw');
  });

  it('updates live CPU and memory in place, without moving the focus', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(connected, sessions));
    const restart = card(page, 'Session build, idle').getByRole('button', {
      name: 'Restart build (its files are lost)',
    });
    await restart.focus();
    await panel.send({
      type: 'stats',
      stats: { id: 'a'.repeat(64), cpuPercent: 37, memoryBytes: 128 * MiB, memoryLimitBytes: 512 * MiB },
    });
    const running = card(page, 'Session default, running');
    const memory = running.getByRole('meter', { name: 'Memory: 128 MiB of 512 MiB' });
    assert.equal(await memory.getAttribute('aria-valuenow'), '25');
    assert.equal(await running.getByRole('meter', { name: 'CPU: 37% of 1 CPU' }).getAttribute('aria-valuenow'), '37');
    assert.match(await running.innerText(), /37% of 1 CPU[\s\S]*128 MiB of 512 MiB/);
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
      'Restart build (its files are lost)',
      'a stats update does not move the focus',
    );
  });

  it('checks the defaults against the settings bounds before it asks the host to save them', async () => {
    const panel = await openPanel(browser, server.url, { state: { newRuntime: 'python', defaultsOpen: true } });
    const { page } = panel;
    await panel.send(state(connected, []));
    const memory = page.getByRole('textbox', { name: 'Memory' });
    const cpus = page.getByRole('textbox', { name: 'CPUs' });
    const save = page.getByRole('button', { name: 'Save the default limits to settings' });
    assert.equal(await memory.inputValue(), '512m');
    assert.equal(await cpus.inputValue(), '1');

    await memory.fill('lots');
    await cpus.fill('100');
    await save.click();
    const alerts = page.getByRole('group').getByRole('alert');
    assert.deepEqual(
      (await alerts.allInnerTexts()).filter(Boolean),
      ['Memory must be a size like 512m or 1g.', 'CPUs must be between 0.05 and 64.'],
      'the bounds of limits.cpus in the settings schema',
    );
    assert.equal(await page.locator('[data-field="memory"]').getAttribute('aria-invalid'), '');
    assert.equal(
      (await panel.posted()).some((message) => message.type === 'saveDefaults'),
      false,
      'nothing saved',
    );

    await memory.fill('1g');
    await cpus.fill('2');
    await choose(page, 'Network', 'allowlist');
    assert.match(
      await page.getByText(/^allowlist: /).innerText(),
      /allowlist: empty \(agentSandbox\.network\.allow in settings\)/,
    );
    await save.click();
    assert.deepEqual((await alerts.allInnerTexts()).filter(Boolean), [], 'the problems are gone');
    assert.deepEqual(await lastPosted(panel), {
      type: 'saveDefaults',
      defaults: {
        memory: '1g',
        cpus: 2,
        pids: 256,
        timeoutSeconds: 120,
        maxStdoutBytes: 1048576,
        maxStderrBytes: 1048576,
        workspaceAccess: 'none',
        network: 'allowlist',
        target: 'user',
      },
    });
    await panel.send({
      type: 'defaults',
      defaults: { ...defaults, memory: '1g', cpus: 2, network: 'allowlist', networkAllow: ['pypi.org'] },
    });
    await panel.send({
      type: 'result',
      action: 'saveDefaults',
      ok: true,
      message: 'Saved the defaults to your user settings.',
    });
    assert.equal(await page.getByRole('textbox', { name: 'Memory' }).inputValue(), '1g');
    assert.equal(await shown(page.getByRole('combobox', { name: 'Network' })), 'allowlist');
    assert.equal(await page.getByText(/^allowlist: /).innerText(), 'allowlist: pypi.org');
    assert.equal(await toast(page).innerText(), 'Saved the defaults to your user settings.');
  });

  it('reaches every action with the keyboard alone, each with a label', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(connected, sessions));
    const reached = new Set<string>();
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const info = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        const session = element?.closest('[data-session]') as HTMLElement | null;
        return element
          ? {
              label: element.getAttribute('aria-label') ?? element.textContent?.trim(),
              session: session?.dataset.session,
            }
          : undefined;
      });
      if (info?.label) reached.add(`${info.session ?? ''}:${info.label}`);
    }
    for (const expected of [
      ':Defaults for new sandboxes',
      ':Open a new session',
      'default:Open a terminal in default',
      'default:Workspace access of default',
      'default:Restart default (its files are lost)',
      'default:Close default',
      'build:Open a terminal in build',
      'agent:analyst/default:Close agent:analyst/default',
    ])
      assert.ok(reached.has(expected), `${expected} is reachable by Tab (reached: ${[...reached].join(', ')})`);
    await card(page, 'Session build, idle').getByRole('button', { name: 'Close build' }).focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await lastPosted(panel), { type: 'closeSession', sandboxId: 'build' });
  });

  it('keeps its UI state across a reload, and only UI state', async () => {
    const panel = await openPanel(browser, server.url);
    await panel.send(state(connected, []));
    await choose(panel.page, 'Runtime of the new session', 'bash');
    await panel.page.getByRole('group').getByText('Defaults for new sandboxes').click();
    await settled(panel.page); // details fires its toggle event after the click
    const saved = await panel.savedState();
    assert.deepEqual(
      saved,
      { newRuntime: 'bash', defaultsOpen: true },
      'only UI state: no sessions, engine or defaults',
    );

    const again = await openPanel(browser, server.url, { state: saved });
    await again.send(state(connected, []));
    assert.equal(await shown(again.page.getByRole('combobox', { name: 'Runtime of the new session' })), 'bash');
    assert.equal(await visible(again.page.getByRole('textbox', { name: 'Memory' })), true, 'the defaults stay open');
    await again.page.getByRole('button', { name: 'Open a new session' }).click();
    assert.deepEqual(await lastPosted(again), { type: 'openSession', name: 'default', runtime: 'bash' });
  });

  it("shows a session's last images as thumbnails; one click asks the host to open it", async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    const chart = `data:image/png;base64,${barChartPng(600, 400, [0.3, 0.8, 0.55, 0.95]).toString('base64')}`;
    const withImages: SessionView = {
      ...sessions[0]!,
      images: [
        {
          key: 'files/f_0123456789abcdef',
          name: 'figure-1.png',
          source: 'figure 1',
          src: chart,
          width: 600,
          height: 400,
        },
        { key: 'files/f_fedcba9876543210', name: 'chart.png', source: '/tmp/outputs/chart.png', src: chart },
      ],
    };
    await panel.send(state(connected, [withImages, ...sessions.slice(1)]));
    const running = card(page, 'Session default, running');
    const thumbs = running.getByRole('group', { name: 'Last images (2)' });
    const first = thumbs.getByRole('button', { name: 'Open image figure-1.png' });
    assert.equal(await visible(first), true);
    const image = first.getByRole('img', { name: 'figure 1, 600×400' });
    const drawn = await image.evaluate((element: HTMLImageElement) => ({
      natural: element.naturalWidth,
      height: element.getBoundingClientRect().height,
    }));
    assert.equal(drawn.natural, 600, 'the picture loaded under the panel CSP');
    assert.ok(drawn.height <= 72, `a thumbnail, not the picture: ${drawn.height} px high`);
    await page.screenshot({ path: resolve(SHOTS, 'panel-thumbnails.png') });
    await first.click();
    assert.deepEqual(await lastPosted(panel), { type: 'openImage', key: 'files/f_0123456789abcdef' });
    await thumbs.getByRole('button', { name: 'Open image chart.png' }).focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await lastPosted(panel), { type: 'openImage', key: 'files/f_fedcba9876543210' });
    assert.equal(
      await card(page, 'Session build, idle')
        .getByRole('group', { name: /Last images/ })
        .count(),
      0,
    );
  });

  it("shows a copy session's changes awaiting review, with Review, Apply All and Discard All", async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    const copy: SessionView = {
      ...sessions[0]!,
      workspaceAccess: 'copy',
      copyChanges: { files: 3, conflicts: 1, held: 1 },
    };
    await panel.send(state(connected, [copy, ...sessions.slice(1)]));
    const running = card(page, 'Session default, running');
    assert.match(await running.innerText(), /workspace: copy/);
    assert.equal(await shown(running.getByRole('combobox', { name: 'Workspace access of default' })), 'copy');
    const changes = running.getByRole('group', { name: 'Changes of default' });
    assert.equal(
      await changes.getByRole('status').innerText(),
      '3 changed files await review (1 conflict, 1 needs confirmation)',
    );
    await changes.getByRole('button', { name: 'Review the changes of default in Source Control' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'reviewChanges', sandboxId: 'default' });
    await changes.getByRole('button', { name: 'Apply every change of default to the folder' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'applyChanges', sandboxId: 'default' });
    await changes.getByRole('button', { name: 'Discard every change of default' }).click();
    assert.deepEqual(await lastPosted(panel), { type: 'discardChanges', sandboxId: 'default' });
    await page.screenshot({ path: resolve(SHOTS, 'panel-copy-changes.png') });

    await panel.send({ type: 'sessions', sessions: [{ ...copy, copyChanges: { files: 0, conflicts: 0, held: 0 } }] });
    assert.equal(await changes.getByRole('status').innerText(), 'No changes in the copy');
    assert.equal(await changes.getByRole('button').count(), 0, 'nothing to apply');
    assert.equal(await card(page, 'Session build, idle').count(), 0);
  });

  it('shows network decisions in Activity and asks the host to export the audit log', async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    await panel.send(state(connected, sessions));
    await panel.send({
      type: 'activity',
      entry: {
        tool: 'network',
        summary: 'evil.example:443 refused: evil.example is not on the allowlist',
        exitCode: null,
        ok: false,
        durationMs: 0,
        at: new Date().toISOString(),
        sandboxId: 'default',
      },
    });
    assert.match(
      await region(page, 'Activity').innerText(),
      /network\s+default\s+refused[\s\S]*evil\.example:443 refused/,
    );
    await region(page, 'Activity')
      .getByRole('button', { name: /Export the audit log/ })
      .click();
    assert.deepEqual(await lastPosted(panel), { type: 'exportLog' });
  });

  it("lists a session's secrets by name: where a bound one goes and its use, an inside one as a warning", async () => {
    const panel = await openPanel(browser, server.url);
    const { page } = panel;
    const withSecrets: SessionView = {
      ...sessions[0]!,
      networkAllow: ['api.github.com', 'pypi.org'],
      secrets: [
        { name: 'GITHUB_TOKEN', binding: '→ api.github.com, Authorization header', inside: false, used: 3, refused: 1 },
        {
          name: 'REGISTRY_PASSWORD',
          binding: '→ registry.example.com, basic auth as ci',
          inside: false,
          used: 0,
          refused: 0,
        },
        { name: 'DB_PASSWORD', binding: 'value inside the sandbox', inside: true, used: 0, refused: 0 },
      ],
    };
    await panel.send(state(connected, [withSecrets, ...sessions.slice(1)]));
    const running = card(page, 'Session default, running');
    const secrets = running.getByRole('group', { name: 'Secrets of default (3)' });
    const item = (name: string | RegExp) => secrets.getByRole('listitem', { name });
    assert.deepEqual(
      (await secrets.getByRole('listitem').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim()),
      [
        'GITHUB_TOKEN → api.github.com, Authorization header used 3 times ⚠ 1 not replaced',
        'REGISTRY_PASSWORD → registry.example.com, basic auth as ci not used yet',
        'DB_PASSWORD ⚠ value inside the sandbox',
      ],
    );
    assert.equal(
      await item(/^GITHUB_TOKEN /).getAttribute('aria-label'),
      'GITHUB_TOKEN → api.github.com, Authorization header, used 3 times, 1 not replaced (sent where it is not bound)',
    );
    assert.equal(await item('DB_PASSWORD value inside the sandbox').count(), 1, 'its label says so');

    // The warnings (an inside value, a placeholder sent where it was not bound) stand out; a bound secret used as bound does not.
    const border = (name: string) =>
      secrets.locator(`[data-secret="${name}"]`).evaluate((element) => getComputedStyle(element).borderLeftColor);
    const warning = await page.evaluate(() => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--vscode-editorWarning-foreground, var(--vscode-charts-orange))';
      document.body.append(probe);
      const colour = getComputedStyle(probe).color;
      probe.remove();
      return colour;
    });
    assert.equal(await border('DB_PASSWORD'), warning, 'an inside secret is drawn as a warning');
    assert.equal(await border('GITHUB_TOKEN'), warning, 'a refused attempt is a warning');
    assert.notEqual(await border('REGISTRY_PASSWORD'), warning);
    assert.equal(
      await card(page, 'Session build, idle')
        .getByRole('group', { name: /Secrets/ })
        .count(),
      0,
      'a session without secrets lists none',
    );
    const text = await page.locator('body').innerText();
    assert.doesNotMatch(text, /agent-sandbox-placeholder-/, 'no placeholder');

    // What the proxy did shows in Activity, each note on its own line; a later count replaces the card's.
    await panel.send({
      type: 'activity',
      entry: {
        tool: 'network',
        summary:
          'api.github.com:443 allowed (api.github.com), 812 B out, 2048 B in; GITHUB_TOKEN added; GITHUB_TOKEN in a URL toward api.github.com: not replaced',
        exitCode: null,
        ok: true,
        durationMs: 0,
        at: new Date().toISOString(),
        sandboxId: 'default',
      },
    });
    const decision = region(page, 'Activity').getByRole('listitem').first();
    assert.deepEqual(await decision.locator('code').allInnerTexts(), [
      'api.github.com:443 allowed (api.github.com), 812 B out, 2048 B in',
      'GITHUB_TOKEN added',
      'GITHUB_TOKEN in a URL toward api.github.com: not replaced',
    ]);
    assert.match((await decision.locator('code').nth(2).getAttribute('class')) ?? '', /note-warning/);
    assert.doesNotMatch((await decision.locator('code').nth(1).getAttribute('class')) ?? '', /note-warning/);
    const counted = withSecrets.secrets!.map((secret) =>
      secret.name === 'GITHUB_TOKEN' ? { ...secret, used: 4 } : secret,
    );
    await panel.send({ type: 'sessions', sessions: [{ ...withSecrets, secrets: counted }] });
    assert.match(await item(/^GITHUB_TOKEN /).innerText(), /used 4 times/);
    await page.screenshot({ path: resolve(SHOTS, 'panel-secrets.png') });
  });
});
