#!/usr/bin/env node
// Runs the "vscode" test tier (test/vscode/suite) inside a real VS Code extension host:
// code-server (VS Code's server + a Node extension host) driven by headless Debian chromium
// through playwright-core, because @vscode/test-electron cannot download VS Code here.
// Prerequisites: bash scripts/provision-vscode.sh. Usage:
//   node test/vscode/runInCodeServer.mjs [--extension DIR] [--workspace DIR] [--grep RE]
//                                        [--timeout SECONDS] [--keep] [--untrusted] [--vsix FILE]
//                                        [--agent-loop]
// The extension under test is the packaged VSIX (--vsix, or packaged from --extension with
// npm run package), installed into the host as users install it; the suite runs from the test
// driver extension (test/vscode/driver), so VS Code shows its dialogs and tests click them.
// --untrusted: workspace trust stays on and the folder is not trusted; runs only untrusted.test.
// --agent-loop: runs test/vscode/agentLoop instead: our tools inside Copilot Chat's own agent loop,
//   with a scripted model (test/vscode/scriptedModel); see agentLoopHost.mjs.
// Env overrides: AGENT_SANDBOX_VSCODE_EXTENSION (extension folder, default: the repo),
//   AGENT_SANDBOX_VSCODE_CACHE (default: .cache/vscode-host), AGENT_SANDBOX_VSCODE_TIMEOUT (s),
//   AGENT_SANDBOX_VSCODE_GREP, CHROMIUM (default /usr/bin/chromium).
// The whole environment of this process reaches the extension host (DOCKER_HOST, AGENT_SANDBOX_*).
// Exit code: 0 when every test passed, non-zero otherwise; the last line is the summary
// "vscode: N passed, N failed, N skipped".
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { AGENT_LOOP_SETTINGS, buildScriptedModel, prepareLoopDir, serveAgentLoop } from './agentLoopHost.mjs';
import { computeLeftovers } from './leftovers.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'out/test/vscode');
const SUITE_SRC = path.join(ROOT, 'test/vscode/suite');
/** Must match OUTPUT_MARK in suite/index.ts. */
const OUTPUT_MARK = '\u2063[vscode-suite]';
const PROVISION_HINT = 'run: bash scripts/provision-vscode.sh';
const DRIVER = path.join(ROOT, 'test/vscode/driver');
const AGENT_LOOP_SRC = path.join(ROOT, 'test/vscode/agentLoop');

// ------------------------------------------------------------------ shared with runWithTestElectron.mjs

/**
 * Bundles suite/index.ts (with mocha) and each *.test.ts of `testsDir` (default suite/) into
 * out/test/vscode/<name of testsDir>/.
 */
export async function buildSuite(testsDir = SUITE_SRC) {
  const esbuild = await import('esbuild');
  fs.rmSync(OUT, { recursive: true, force: true });
  const outDir = path.join(OUT, path.basename(testsDir));
  const tests = fs
    .readdirSync(testsDir)
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
  if (tests.length === 0) throw new Error(`no *.test.ts in ${testsDir}`);
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [
      { in: path.join(SUITE_SRC, 'index.ts'), out: 'index' },
      ...tests.map((f) => ({ in: path.join(testsDir, f), out: f.replace(/\.ts$/, '') })),
    ],
    outdir: outDir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    // mocha is bundled into index.js (mocha 12 is an ES module package, which the extension
    // hosts of older VS Code builds cannot require()); test files use the tdd globals it installs.
    external: ['vscode'],
    logLevel: 'warning',
    // mocha's parallel mode (unused here) resolves its worker files at run time
    logOverride: { 'require-resolve-not-external': 'silent' },
  });
  return path.join(outDir, 'index.js');
}

/** A throwaway workspace folder with one small file, so tests never touch the repo. */
export function makeWorkspace(dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'hello.py'), 'print("hello from the test workspace")\n');
  return dir;
}

/** Counts written by suite/index.ts to $AGENT_SANDBOX_VSCODE_RESULTS, or undefined. */
export function readResults(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The one-line summary; exit code 0 only if the host said 0, nothing failed and something ran. */
export function summarize(hostCode, results, tier = 'vscode') {
  if (!results) {
    console.log(`${tier}: 0 passed, 1 failed`);
    return 1;
  }
  if (results.passed === 0 && results.failed === 0) console.error('vscode tests: no test ran');
  if (hostCode !== 0 && results.failed === 0) {
    console.error(`vscode tests: the extension host exited ${hostCode} although no test failed`);
  }
  console.log(`${tier}: ${results.passed} passed, ${results.failed} failed, ${results.pending} skipped`);
  return hostCode === 0 && results.failed === 0 && results.passed > 0 ? 0 : 1;
}

// ------------------------------------------------------------------ helpers

function fail(message, code = 2) {
  console.error(`vscode tests: ${message}`);
  process.exit(code);
}

/**
 * Screenshots on request from the suite (which runs in the extension host, not the browser): a test
 * writes NAME.request into the folder, the runner saves NAME.png and answers with NAME.done.
 */
function serveScreenshots(page, dir) {
  let accepting = false; // ticks overlap when one takes longer than the interval: one dialog, one acceptance
  const timer = setInterval(async () => {
    // While the suite is calling tools (auto-accept exists), a person approving each tool confirmation:
    // click the dialog's primary button, and note its message in accepted.log for the suite to read.
    if (!accepting && fs.existsSync(path.join(dir, 'auto-accept'))) {
      accepting = true;
      try {
        // A dialog already accepted (marked below) may still be closing when the next tick looks.
        const dialog = await page.$('.monaco-dialog-box:not([data-accepted])');
        const primary = await dialog?.$('.monaco-button:not(.secondary)');
        // Only tool confirmations: the product's own policy questions are for the test to answer (clickDialogButton).
        const label = (await primary?.textContent()) ?? '';
        if (label && !/^(Allow |Turn On|Recreate|Restart|Close )/.test(label.trim())) {
          const message = await dialog.$eval('.dialog-message-container', (element) => element.textContent);
          // Marked and noted before the click: the call it lets run never returns before its note is there,
          // and it is noted once.
          await dialog.evaluate((element) => element.setAttribute('data-accepted', ''));
          fs.appendFileSync(path.join(dir, 'accepted.log'), `${JSON.stringify(message)}\n`);
          await primary.click({ timeout: 2000 });
        }
      } catch {
      } finally {
        accepting = false;
      }
    }
    // A click on a modal dialog's button, as a person would: NAME.click holds the button's label.
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.click'))) {
      const name = file.slice(0, -'.click'.length);
      // The label, and on a second line text the dialog's message must hold (another dialog may be closing).
      const [label, within] = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
      fs.rmSync(path.join(dir, file), { force: true });
      try {
        const box = within
          ? page.locator('.monaco-dialog-box', { hasText: within }).first()
          : page.locator('.monaco-dialog-box').first();
        const button = box.locator('.monaco-button', { hasText: label }).first();
        await button.waitFor({ state: 'visible', timeout: 20_000 });
        const message = await box
          .locator('.dialog-message-container')
          .first()
          .textContent()
          .catch(() => '');
        // The dialog is there; a busy machine may keep its opening animation from settling, so no stability wait.
        await button.click({ force: true, timeout: 5_000 });
        answerFile(path.join(dir, `${name}.clicked`), `ok\n${message ?? ''}`);
      } catch (err) {
        await page.screenshot({ path: path.join(dir, `${name}-failed.png`) }).catch(() => undefined);
        const buttons = await page
          .locator('[role="dialog"] a, [role="dialog"] button, .monaco-dialog-box a')
          .allTextContents()
          .catch(() => []);
        const html = await page
          .locator('[role="dialog"]')
          .first()
          .innerHTML({ timeout: 1000 })
          .catch(() => 'no [role=dialog]');
        answerFile(
          path.join(dir, `${name}.clicked`),
          `failed: ${err?.message ?? err}\nbuttons: ${JSON.stringify(buttons)}\n${html.slice(0, 3000)}`,
        );
      }
    }
    // Waiting for a modal dialog without answering it (the suite acts meanwhile, then clicks): NAME.wait.
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.wait'))) {
      const name = file.slice(0, -'.wait'.length);
      fs.rmSync(path.join(dir, file), { force: true });
      try {
        const message = page.locator('.monaco-dialog-box .dialog-message-container').first();
        await message.waitFor({ state: 'visible', timeout: 20_000 });
        answerFile(path.join(dir, `${name}.shown`), `ok\n${(await message.textContent()) ?? ''}`);
      } catch (err) {
        answerFile(path.join(dir, `${name}.shown`), `failed: ${err?.message ?? err}`);
      }
    }
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.request'))) {
      const name = file.slice(0, -'.request'.length);
      fs.rmSync(path.join(dir, file), { force: true });
      try {
        await page.screenshot({ path: path.join(dir, `${name}.png`) });
        answerFile(path.join(dir, `${name}.done`), 'ok');
      } catch (err) {
        answerFile(path.join(dir, `${name}.done`), `failed: ${err?.message ?? err}`);
      }
    }
  }, 100);
  page.on('close', () => clearInterval(timer));
  timer.unref();
}

/**
 * What the user sees, on request from the suite: a test writes NAME.look with what to look at
 * (`{"target": "panel" | "palette" | "statusbar" | "problems" | "scm"}`) and, optionally, what to do there first as a
 * person would (`"click": {"role", "name"}` or `"choose": {"combobox", "option"}`); the runner
 * answers NAME.seen with the area's accessibility tree (roles, names, states) and its text.
 */
function serveLooks(page, dir) {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.look'))) {
        const name = file.slice(0, -'.look'.length);
        let answer;
        try {
          const request = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
          fs.rmSync(path.join(dir, file), { force: true });
          answer = { ok: true, ...(await lookAt(page, request)) };
        } catch (err) {
          answer = { ok: false, error: String(err?.message ?? err) };
        }
        answerFile(path.join(dir, `${name}.seen`), JSON.stringify(answer));
      }
    } finally {
      busy = false;
    }
  }, 100);
  page.on('close', () => clearInterval(timer));
  timer.unref();
}

async function lookAt(page, request) {
  let area;
  if (request.target === 'panel') {
    // The Sandbox panel's webview: a frame inside VS Code's webview frames, holding the panel's layout.
    for (const frame of page.frames()) {
      if (
        await frame
          .locator('#root .layout')
          .count()
          .catch(() => 0)
      ) {
        area = frame.locator('body');
        break;
      }
    }
    if (!area) throw new Error('the Sandbox panel is not on screen');
  } else if (request.target === 'palette') area = page.locator('.quick-input-widget');
  else if (request.target === 'statusbar') area = page.locator('.part.statusbar');
  else if (request.target === 'problems') area = page.locator('.markers-panel');
  else if (request.target === 'scm') area = page.locator('.part.sidebar');
  // The visible terminal's rows, as xterm's DOM renderer draws them (the suite turns GPU rendering off).
  else if (request.target === 'terminal') area = page.locator('.terminal-wrapper.active .xterm-rows').first();
  else throw new Error(`nothing called ${request.target} to look at`);
  if (request.click) await area.getByRole(request.click.role, { name: request.click.name, exact: true }).click();
  if (request.choose) {
    const box = area.getByRole('combobox', { name: request.choose.combobox, exact: true });
    await box.click();
    await box.getByRole('option', { name: request.choose.option, exact: true }).click();
  }
  return { aria: await area.ariaSnapshot({ timeout: 5000 }), text: await area.innerText({ timeout: 5000 }) };
}

/**
 * Writes an answer the suite polls for in one step (a temporary name, then a rename): the suite sees
 * the file only whole, never empty while it is being written.
 */
function answerFile(file, text) {
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}

/** Packages the extension as users get it (npm run package) into `dir`; returns the VSIX's path. */
function packageVsix(extension, dir) {
  const out = path.join(dir, 'agent-sandbox.vsix');
  const started = Date.now();
  const result = spawnSync('npm', ['run', '--silent', 'package', '--', '--out', out], {
    cwd: extension,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status !== 0 || !fs.existsSync(out))
    fail(`packaging the VSIX failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  console.log(`vscode tests: packaged ${path.basename(out)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return out;
}

/** Installs the VSIX into the run's own extensions folder with code-server's CLI, as a user would. */
function installVsix(node24, codeServer, vsix, tmp) {
  const result = spawnSync(
    node24,
    [
      codeServer,
      '--user-data-dir',
      path.join(tmp, 'user-data'),
      '--extensions-dir',
      path.join(tmp, 'extensions'),
      '--install-extension',
      vsix,
      '--force',
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'), XDG_DATA_HOME: path.join(tmp, 'xdg-data') },
    },
  );
  if (result.status !== 0 || !/successfully installed/i.test(`${result.stdout}${result.stderr}`))
    fail(`installing ${vsix} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
}

/** Prints the suite's output as it grows, and resolves `done` with the exit code once the driver writes it. */
function followOutput(outputFile, exitFile, done) {
  let printed = 0;
  const flush = () => {
    let text = '';
    try {
      text = fs.readFileSync(outputFile, 'utf8');
    } catch {
      return;
    }
    if (text.length > printed) process.stdout.write(text.slice(printed));
    printed = text.length;
  };
  const timer = setInterval(() => {
    flush();
    if (!fs.existsSync(exitFile)) return;
    clearInterval(timer);
    flush();
    try {
      process.stderr.write(fs.readFileSync(`${exitFile}.log`, 'utf8'));
    } catch {}
    done(Number(fs.readFileSync(exitFile, 'utf8')));
  }, 200);
  timer.unref();
}

function parseArgs(argv) {
  const opts = {
    extension: process.env.AGENT_SANDBOX_VSCODE_EXTENSION || ROOT,
    workspace: undefined,
    grep: process.env.AGENT_SANDBOX_VSCODE_GREP || undefined,
    timeoutS: Number(process.env.AGENT_SANDBOX_VSCODE_TIMEOUT) || undefined,
    keep: false,
    untrusted: false,
    agentLoop: false,
    vsix: process.env.AGENT_SANDBOX_VSCODE_VSIX || undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    if (a === '--extension') opts.extension = value();
    else if (a === '--workspace') opts.workspace = value();
    else if (a === '--grep') opts.grep = value();
    else if (a === '--timeout') opts.timeoutS = Number(value());
    else if (a === '--keep') opts.keep = true;
    else if (a === '--vsix') opts.vsix = value();
    else if (a === '--agent-loop') opts.agentLoop = true;
    else if (a === '--untrusted')
      opts.untrusted = true; // workspace trust on, folder not trusted: runs untrusted.test only
    else if (a === '-h' || a === '--help') {
      console.log(
        fs
          .readFileSync(fileURLToPath(import.meta.url), 'utf8')
          .split('\n')
          .slice(1, 18)
          .join('\n'),
      );
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  // The agent-loop tier runs longer (megabytes of output through the chat): 10 minutes before the runner gives up.
  opts.timeoutS ??= opts.agentLoop ? 600 : 300;
  if (!(opts.timeoutS > 0)) fail('--timeout must be a positive number of seconds');
  if (opts.agentLoop && opts.untrusted) fail('--agent-loop and --untrusted are separate runs');
  opts.extension = path.resolve(opts.extension);
  if (opts.workspace) opts.workspace = path.resolve(opts.workspace);
  if (opts.vsix) opts.vsix = path.resolve(opts.vsix);
  return opts;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function httpStatus(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function logTail(file, lines = 60) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// ------------------------------------------------------------------ the run

async function cli() {
  const started = Date.now();
  const runStarted = new Date(started).toISOString();
  const opts = parseArgs(process.argv.slice(2));
  const cache = path.resolve(process.env.AGENT_SANDBOX_VSCODE_CACHE || path.join(ROOT, '.cache/vscode-host'));
  const node24 = path.join(cache, 'node/bin/node');
  const codeServer = path.join(cache, 'node_modules/code-server/out/node/entry.js');
  const chromium = process.env.CHROMIUM || '/usr/bin/chromium';

  // Prerequisites
  for (const [what, file] of [
    ['Node 24', node24],
    ['code-server', codeServer],
    ['chromium', chromium],
  ]) {
    if (!fs.existsSync(file)) fail(`${what} is missing (${file}); ${PROVISION_HINT}`);
  }
  let playwright;
  try {
    playwright = createRequire(path.join(cache, 'package.json'))('playwright-core');
  } catch {
    fail(`playwright-core is missing in ${cache}; ${PROVISION_HINT}`);
  }
  const extPkgFile = path.join(opts.extension, 'package.json');
  if (!fs.existsSync(extPkgFile)) fail(`no extension at ${opts.extension} (no package.json)`);
  const extMain = JSON.parse(fs.readFileSync(extPkgFile, 'utf8')).main;
  if (extMain) {
    const main = path.resolve(opts.extension, extMain);
    if (![main, `${main}.js`].some((f) => fs.existsSync(f))) {
      fail(`the extension is not built: ${main} is missing (run: node esbuild.mjs)`);
    }
  }

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-vscode-'));
  const serverLog = path.join(tmp, 'code-server.log');
  const workbenchLog = path.join(tmp, 'workbench.log');
  const resultsFile = path.join(tmp, 'results.json');
  const exitFile = path.join(tmp, 'exit-code');
  const outputFile = path.join(tmp, 'suite-output.txt');
  let server;
  let browser;
  let cleaning;

  const cleanup = () =>
    (cleaning ??= (async () => {
      if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
      if (server && server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((r) => server.once('exit', r));
        try {
          process.kill(-server.pid, 'SIGTERM');
        } catch {}
        await Promise.race([exited, sleep(3000)]);
      }
      // whatever is left in code-server's process group (extension host, file watcher, ...)
      if (server) {
        try {
          process.kill(-server.pid, 'SIGKILL');
        } catch {}
      }
      if (opts.keep) console.log(`vscode tests: kept ${tmp} (code-server.log, workbench.log)`);
      else fs.rmSync(tmp, { recursive: true, force: true });
    })());

  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ]) {
    process.on(sig, () => {
      console.error(`vscode tests: ${sig}, stopping`);
      cleanup().finally(() => process.exit(code));
    });
  }

  async function run() {
    const suiteIndex = await buildSuite(opts.agentLoop ? AGENT_LOOP_SRC : undefined);
    const scriptedModel = opts.agentLoop ? await buildScriptedModel(ROOT) : undefined;
    const workspace = opts.workspace ?? makeWorkspace(path.join(tmp, 'workspace'));
    for (const d of ['user-data', 'extensions', 'xdg-config', 'xdg-data', 'xdg-cache', 'xdg-runtime']) {
      fs.mkdirSync(path.join(tmp, d), { recursive: true, mode: 0o700 });
    }

    // What users install: the packaged VSIX, installed into this host's extensions folder, so a
    // .vscodeignore or bundling mistake fails here. Only the test driver is a development extension.
    const vsix = opts.vsix ?? packageVsix(opts.extension, tmp);
    installVsix(node24, codeServer, vsix, tmp);
    if (scriptedModel) installVsix(node24, codeServer, scriptedModel, tmp);

    const port = await freePort();
    const origin = `127.0.0.1:${port}`;
    const env = {
      ...process.env, // DOCKER_HOST, AGENT_SANDBOX_* ... reach the extension host
      XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
      XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
      XDG_CACHE_HOME: path.join(tmp, 'xdg-cache'),
      XDG_RUNTIME_DIR: path.join(tmp, 'xdg-runtime'), // the git extension's IPC socket lands here, not in /tmp
      EXTENSIONS_GALLERY: '{}', // no marketplace: the workbench would query open-vsx.org
      AGENT_SANDBOX_VSCODE_RESULTS: resultsFile,
      // The test driver extension (test/vscode/driver) runs the suite and answers through these files.
      AGENT_SANDBOX_VSCODE_SUITE: suiteIndex,
      AGENT_SANDBOX_VSCODE_EXIT: exitFile,
      AGENT_SANDBOX_VSCODE_OUTPUT: outputFile,
      AGENT_SANDBOX_VSCODE_WORKSPACE: workspace,
      AGENT_SANDBOX_VSCODE_ROOT: ROOT,
    };
    if (opts.grep) env.AGENT_SANDBOX_VSCODE_GREP = opts.grep;
    const screenshotDir = path.join(ROOT, 'out', 'screenshots');
    fs.mkdirSync(screenshotDir, { recursive: true });
    for (const stale of fs
      .readdirSync(screenshotDir)
      .filter((f) =>
        /^(auto-accept|accepted\.log)$|\.(click|clicked|wait|shown|request|done)$|^dialog-.*\.png$/.test(f),
      ))
      fs.rmSync(path.join(screenshotDir, stale), { force: true });
    env.AGENT_SANDBOX_VSCODE_SCREENSHOTS = screenshotDir;
    const loopDir = opts.agentLoop ? prepareLoopDir(ROOT) : undefined;
    if (loopDir) env.AGENT_SANDBOX_AGENT_LOOP_DIR = loopDir;
    // An ordinary window (see the payload below) sends telemetry unless told not to; this machine has no network for it.
    const userSettings = {
      'telemetry.telemetryLevel': 'off',
      'workbench.startupEditor': 'none',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'update.mode': 'none',
    };
    if (opts.agentLoop) Object.assign(userSettings, AGENT_LOOP_SETTINGS);
    if (opts.untrusted) {
      env.AGENT_SANDBOX_VSCODE_UNTRUSTED = '1';
      // Trust stays on, the folder stays untrusted (restricted mode), and no startup prompt waits for a click.
      Object.assign(userSettings, {
        'security.workspace.trust.startupPrompt': 'never',
        'security.workspace.trust.untrustedFiles': 'open',
      });
    }
    const userDir = path.join(tmp, 'user-data', 'User');
    fs.mkdirSync(userDir, { recursive: true });
    fs.writeFileSync(path.join(userDir, 'settings.json'), JSON.stringify(userSettings, null, 2));
    delete env.VSCODE_IPC_HOOK_CLI; // never talk to an enclosing VS Code
    const logFd = fs.openSync(serverLog, 'a');
    server = spawn(
      node24,
      [
        codeServer,
        '--bind-addr',
        origin,
        '--auth',
        'none',
        '--disable-telemetry',
        '--disable-update-check',
        ...(opts.untrusted ? [] : ['--disable-workspace-trust']),
        '--disable-getting-started-override',
        '--ignore-last-opened',
        '--user-data-dir',
        path.join(tmp, 'user-data'),
        '--extensions-dir',
        path.join(tmp, 'extensions'),
        '--vscode-option',
        'enable-smoke-test-driver',
        // Safety net if this runner is SIGKILLed: once the browser is gone, code-server stops itself.
        '--idle-timeout-seconds',
        '120',
      ],
      { cwd: workspace, env, detached: true, stdio: ['ignore', logFd, logFd] },
    );
    fs.closeSync(logFd);
    let serverExit;
    server.on('exit', (code, signal) => {
      serverExit = signal ?? code;
    });

    const deadline = Date.now() + 60_000;
    while ((await httpStatus(`http://${origin}/healthz`)) !== 200) {
      if (serverExit !== undefined) throw new Error(`code-server exited (${serverExit}) before answering`);
      if (Date.now() > deadline) throw new Error('code-server did not answer within 60 s');
      await sleep(100);
    }
    const serverUp = Date.now();

    browser = await playwright.chromium.launch({
      executablePath: chromium,
      headless: true, // playwright gives each launch a new, empty profile
      // Our own signal handlers stop code-server too; playwright's would exit the process first.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    serveScreenshots(page, screenshotDir);
    serveLooks(page, screenshotDir);
    if (loopDir) serveAgentLoop(page, loopDir);
    let hostExited;
    const hostCode = new Promise((resolve) => {
      hostExited = resolve;
    });
    await page.exposeFunction('codeAutomationExit', (code) => hostExited(Number(code)));
    // The suite marks mocha's output (see suite/index.ts); the workbench's own logging goes to a file.
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const list = Array.isArray(args) ? args : [args];
      if (list[0] === OUTPUT_MARK) {
        (type === 'error' ? process.stderr : process.stdout).write(`${format(...list.slice(1))}\n`);
      } else {
        fs.appendFileSync(workbenchLog, `[${type}] ${format(...list)}\n`);
      }
    });
    page.on('pageerror', (e) => fs.appendFileSync(workbenchLog, `[pageerror] ${e}\n`));

    const remote = (p) => `vscode-remote://${origin}${p}`;
    // No extensionTestsPath: in a window opened with it, VS Code refuses every modal dialog. The test
    // driver extension runs the suite instead, so confirmations appear and tests click them for real.
    const payload = [
      ['extensionDevelopmentPath', remote(DRIVER)],
      ['skipWelcome', 'true'],
    ];
    followOutput(outputFile, exitFile, hostExited);
    await page.goto(
      `http://${origin}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`,
      { waitUntil: 'domcontentloaded' },
    );
    const code = await hostCode;
    console.log(
      `vscode tests: extension host exited ${code}; code-server answered after ` +
        `${((serverUp - started) / 1000).toFixed(1)} s, whole run ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return code;
  }

  let exit = 1;
  let timer;
  try {
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${opts.timeoutS} s (no result from the extension host)`)),
        opts.timeoutS * 1000,
      );
    });
    const code = await Promise.race([run(), timeout]);
    const results = readResults(resultsFile);
    if (!results)
      console.error(`vscode tests: the suite reported no results; code-server log (tail):\n${logTail(serverLog)}`);
    exit = summarize(code, results, opts.agentLoop ? 'agent-loop' : 'vscode');
  } catch (err) {
    console.error(`vscode tests: FAILED: ${err?.message ?? err}`);
    console.error(
      `--- code-server log (tail${opts.keep ? `, kept in ${serverLog}` : '; --keep keeps the run folder'}) ---\n` +
        `${logTail(serverLog)}\n---`,
    );
    exit = summarize(1, undefined, opts.agentLoop ? 'agent-loop' : 'vscode');
  } finally {
    clearTimeout(timer);
    await cleanup();
  }
  // The extension host is gone: what it had started for sandbox_run must be gone too.
  const left = await computeLeftovers(runStarted).catch((error) => [`(could not ask the engine: ${error.message})`]);
  if (left.length) {
    console.error(`vscode tests: compute sandboxes of the stopped extension host were left behind: ${left.join(', ')}`);
    exit = 1;
  }
  process.exit(exit);
}

if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) await cli();
