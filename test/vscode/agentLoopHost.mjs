// The browser side of the agent-loop tier (runInCodeServer.mjs --agent-loop): Copilot Chat's own
// agent loop, bundled with code-server, talks to a scripted model (test/vscode/scriptedModel) that
// calls our tools; this module builds that model, gives the fresh user settings what the loop needs,
// and acts in the page as a person would: it notes every tool confirmation card and modal dialog
// that appears while a case runs, and clicks a card's button when the suite asks.
// Files in the shared folder (see test/vscode/agentLoop/script.ts):
//   active                 the id of the case that runs now (written by the suite)
//   CASE.ui.jsonl          what appeared: {where: card|dialog, title, message, buttons}
//   NAME.chatclick         a button label to click on the pending card -> NAME.chatclicked: "ok\n{card}" or "failed: ..."
//   NAME.snapshot          -> NAME.png, NAME.html (the chat view) and NAME.snapshotdone
/* global document -- page.evaluate runs its function in the browser */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What the user settings need for Copilot Chat to run its agent loop without signing in, offline. */
export const AGENT_LOOP_SETTINGS = {
  // Experimental and hidden from the Settings UI: Copilot Chat activates without a GitHub account
  // (checked in code-server 4.139.1: the workbench's chat entitlement and Copilot's own auth read it).
  'chat.allowAnonymousAccess': true,
  'chat.agent.enabled': true,
  // Nothing is approved ahead: every confirmation a tool asks for appears, and the case answers it.
  'chat.tools.global.autoApprove': false,
};

// A pending tool confirmation is a card in a carousel above the chat input (a hidden copy sits in the
// response); the carousel names it by the tool call's id, which survives the card being re-rendered.
const CARD = '.chat-confirmation-widget2';
const DIALOG = '.monaco-dialog-box';

/**
 * Bundles the scripted model into out/test/vscode/scriptedModel and packages it; returns the VSIX.
 * It is installed like any extension: a window takes one development extension only (the workbench
 * keeps its payload in a map), and that one is the test driver.
 */
export async function buildScriptedModel(root) {
  const esbuild = await import('esbuild');
  const source = path.join(root, 'test/vscode/scriptedModel');
  const out = path.join(root, 'out/test/vscode/scriptedModel');
  fs.rmSync(out, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(source, 'extension.ts')],
    outfile: path.join(out, 'extension.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(source, 'package.json'), path.join(out, 'package.json'));
  const vsix = path.join(out, 'scripted-model.vsix');
  const packaged = spawnSync(
    path.join(root, 'node_modules/.bin/vsce'),
    ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', vsix],
    { cwd: out, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (packaged.status !== 0 || !fs.existsSync(vsix))
    throw new Error(
      `packaging the scripted model failed (exit ${packaged.status}):\n${packaged.stdout}\n${packaged.stderr}`,
    );
  return vsix;
}

/** The shared folder, emptied: scripts, transcripts and what appeared on screen, kept after the run. */
export function prepareLoopDir(root) {
  const dir = path.join(root, 'out/agent-loop');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Reads what a card or a dialog says, marking it so that it is noted once. */
async function unseen(page) {
  return page.evaluate(
    ({ CARD, DIALOG }) => {
      const text = (element, selector) =>
        [...element.querySelectorAll(selector)]
          .map((node) => node.textContent.trim())
          .filter(Boolean)
          .join('\n');
      const found = [];
      const noted = (globalThis.agentLoopNoted ??= new Set());
      for (const card of document.querySelectorAll(CARD)) {
        const buttons = [...card.querySelectorAll('.chat-confirmation-widget-buttons .monaco-button')]
          .map((button) => button.textContent.trim())
          .filter(Boolean);
        const key = card.closest('.chat-tool-carousel-content[id]')?.id;
        if (!card.checkVisibility() || buttons.length === 0 || card.dataset.agentLoopSeen || noted.has(key)) continue;
        // The message (a Markdown code block among it) may still be rendering: note it once two looks agree.
        const message = text(card, '.chat-confirmation-widget-message');
        if (!message || card.dataset.agentLoopPending !== message) {
          card.dataset.agentLoopPending = message;
          continue;
        }
        card.dataset.agentLoopSeen = '1';
        if (key) noted.add(key);
        found.push({
          where: 'card',
          title: text(card, '.chat-confirmation-widget-title'),
          message,
          buttons,
        });
      }
      for (const dialog of document.querySelectorAll(DIALOG)) {
        if (dialog.dataset.agentLoopSeen) continue;
        dialog.dataset.agentLoopSeen = '1';
        found.push({
          where: 'dialog',
          title: text(dialog, '.dialog-message-text'),
          message: text(dialog, '.dialog-message-detail'),
          buttons: [...dialog.querySelectorAll('.dialog-buttons .monaco-button')]
            .map((button) => button.textContent.trim())
            .filter(Boolean),
        });
      }
      return found;
    },
    { CARD, DIALOG },
  );
}

/** Clicks `label` on the last card that still has buttons: a button of its own, or an entry of its dropdown. */
async function clickCard(page, label) {
  const card = page.locator(`${CARD}:visible:has(.chat-confirmation-widget-buttons .monaco-button)`).last();
  await card.waitFor({ state: 'visible', timeout: 30_000 });
  const card_ = {
    title: (await card.locator('.chat-confirmation-widget-title').first().textContent()) ?? '',
    message: (await card.locator('.chat-confirmation-widget-message').first().textContent()) ?? '',
    buttons: (await card.locator('.chat-confirmation-widget-buttons .monaco-button').allTextContents())
      .map((b) => b.trim())
      .filter(Boolean),
  };
  const own = card.locator('.chat-confirmation-widget-buttons .monaco-button', { hasText: label });
  if (card_.buttons.includes(label)) {
    await own
      .filter({ hasText: new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) })
      .first()
      .click();
  } else {
    // "Allow in this Session" and the like live in the dropdown beside the primary button.
    await card.locator('.monaco-button-dropdown .monaco-dropdown-button').first().click();
    const items = page.locator('.monaco-menu .action-item');
    await items.first().waitFor({ state: 'visible', timeout: 10_000 });
    const labels = (await items.allTextContents()).map((text) => text.trim());
    const index = labels.indexOf(label);
    if (index < 0) {
      await page.keyboard.press('Escape');
      throw new Error(
        `no button or menu entry "${label}" on the card; buttons ${JSON.stringify(card_.buttons)}, menu ${JSON.stringify(labels)}`,
      );
    }
    // A click during the menu's opening can be lost: click until the menu closes, as a person would.
    const menu = page.locator('.monaco-menu').first();
    for (let tries = 0; tries < 3 && (await menu.isVisible()); tries++) {
      await items.nth(index).locator('.action-menu-item').first().click({ timeout: 5_000 });
      await menu.waitFor({ state: 'hidden', timeout: 3_000 }).catch(() => undefined);
    }
    if (await menu.isVisible()) throw new Error(`the menu entry "${label}" did not take a click`);
  }
  return card_;
}

/** Serves the suite's requests and notes what appears, until the page closes. */
export function serveAgentLoop(page, dir) {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const active = path.join(dir, 'active');
      if (fs.existsSync(active)) {
        const caseId = fs.readFileSync(active, 'utf8').trim();
        for (const seen of await unseen(page).catch(() => []))
          fs.appendFileSync(path.join(dir, `${caseId}.ui.jsonl`), `${JSON.stringify(seen)}\n`);
      }
      for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.chatclick'))) {
        const name = file.slice(0, -'.chatclick'.length);
        const label = fs.readFileSync(path.join(dir, file), 'utf8');
        fs.rmSync(path.join(dir, file), { force: true });
        let answer;
        try {
          answer = `ok\n${JSON.stringify(await clickCard(page, label))}`;
        } catch (err) {
          answer = `failed: ${err?.message ?? err}`;
        }
        // Written whole, then renamed: the suite polls for it and must never read it half written.
        fs.writeFileSync(path.join(dir, `${name}.chatclicked.tmp`), answer);
        fs.renameSync(path.join(dir, `${name}.chatclicked.tmp`), path.join(dir, `${name}.chatclicked`));
      }
      for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.snapshot'))) {
        const name = file.slice(0, -'.snapshot'.length);
        fs.rmSync(path.join(dir, file), { force: true });
        await page.screenshot({ path: path.join(dir, `${name}.png`) }).catch(() => undefined);
        const html = await page
          .locator('.interactive-session')
          .first()
          .evaluate((node) => node.outerHTML, undefined, { timeout: 2000 })
          .catch((err) => `no chat view: ${err?.message ?? err}`);
        fs.writeFileSync(path.join(dir, `${name}.html`), html);
        fs.writeFileSync(path.join(dir, `${name}.snapshotdone`), 'ok');
      }
    } finally {
      busy = false;
    }
  }, 200);
  page.on('close', () => clearInterval(timer));
  timer.unref();
}
