#!/usr/bin/env node
// Runs the "vscode" test tier (test/vscode/suite) inside a real VS Code extension host:
// code-server (VS Code's server + a Node extension host) driven by headless Debian chromium
// through playwright-core, because @vscode/test-electron cannot download VS Code here.
// Prerequisites: bash scripts/provision-vscode.sh. Usage:
//   node test/vscode/runInCodeServer.mjs [--extension DIR] [--workspace DIR] [--grep RE]
//                                        [--timeout SECONDS] [--keep]
// Env overrides: AGENT_SANDBOX_VSCODE_EXTENSION (extension folder, default: the repo),
//   AGENT_SANDBOX_VSCODE_CACHE (default: .cache/vscode-host), AGENT_SANDBOX_VSCODE_TIMEOUT (s),
//   AGENT_SANDBOX_VSCODE_GREP, CHROMIUM (default /usr/bin/chromium).
// The whole environment of this process reaches the extension host (DOCKER_HOST, AGENT_SANDBOX_*).
// Exit code: 0 when every test passed, non-zero otherwise; the last line is the summary
// "vscode: N passed, N failed, N skipped".
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const started = Date.now();
const PROVISION_HINT = 'run: bash scripts/provision-vscode.sh';

// ------------------------------------------------------------------ options
function parseArgs(argv) {
  const opts = {
    extension: process.env.AGENT_SANDBOX_VSCODE_EXTENSION || ROOT,
    workspace: undefined,
    grep: process.env.AGENT_SANDBOX_VSCODE_GREP || undefined,
    timeoutS: Number(process.env.AGENT_SANDBOX_VSCODE_TIMEOUT || 300),
    keep: false,
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
    else if (a === '-h' || a === '--help') {
      console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 14).join('\n'));
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (!(opts.timeoutS > 0)) fail('--timeout must be a positive number of seconds');
  opts.extension = path.resolve(opts.extension);
  if (opts.workspace) opts.workspace = path.resolve(opts.workspace);
  return opts;
}

function fail(message, code = 2) {
  console.error(`vscode tests: ${message}`);
  process.exit(code);
}

const opts = parseArgs(process.argv.slice(2));
const CACHE = path.resolve(process.env.AGENT_SANDBOX_VSCODE_CACHE || path.join(ROOT, '.cache/vscode-host'));
const NODE24 = path.join(CACHE, 'node/bin/node');
const CODE_SERVER = path.join(CACHE, 'node_modules/code-server/out/node/entry.js');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// ------------------------------------------------------------------ prerequisites
for (const [what, file] of [['Node 24', NODE24], ['code-server', CODE_SERVER], ['chromium', CHROMIUM]]) {
  if (!fs.existsSync(file)) fail(`${what} is missing (${file}); ${PROVISION_HINT}`);
}
let playwright;
try {
  playwright = createRequire(path.join(CACHE, 'package.json'))('playwright-core');
} catch {
  fail(`playwright-core is missing in ${CACHE}; ${PROVISION_HINT}`);
}
const extPkgFile = path.join(opts.extension, 'package.json');
if (!fs.existsSync(extPkgFile)) fail(`no extension at ${opts.extension} (no package.json)`);
const extPkg = JSON.parse(fs.readFileSync(extPkgFile, 'utf8'));
if (extPkg.main) {
  const main = path.resolve(opts.extension, extPkg.main);
  if (![main, `${main}.js`].some((f) => fs.existsSync(f))) {
    fail(`the extension is not built: ${main} is missing (run: node esbuild.mjs)`);
  }
}

// ------------------------------------------------------------------ compile the suite
const OUT = path.join(ROOT, 'out/test/vscode');
const SUITE_SRC = path.join(ROOT, 'test/vscode/suite');
async function buildSuite() {
  const esbuild = await import('esbuild');
  fs.rmSync(OUT, { recursive: true, force: true });
  const tests = fs.readdirSync(SUITE_SRC).filter((f) => f.endsWith('.test.ts')).sort();
  if (tests.length === 0) fail(`no *.test.ts in ${SUITE_SRC}`);
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['index.ts', ...tests].map((f) => path.join(SUITE_SRC, f)),
    outdir: path.join(OUT, 'suite'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    // mocha is bundled into index.js (mocha 12 is an ES module package, which older extension
    // hosts cannot require()); the test files use the tdd globals it installs.
    external: ['vscode'],
    logLevel: 'warning',
    // mocha's parallel mode (unused here) resolves its worker files at run time
    logOverride: { 'require-resolve-not-external': 'silent' },
  });
  return path.join(OUT, 'suite/index.js');
}

// ------------------------------------------------------------------ helpers
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

// ------------------------------------------------------------------ run
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-vscode-'));
const serverLog = path.join(tmp, 'code-server.log');
const resultsFile = path.join(tmp, 'results.json');
const workbenchLog = path.join(tmp, 'workbench.log');
const OUTPUT_MARK = '\u2063[vscode-suite]';
let server;
let browser;
let cleaning;

async function cleanup() {
  if (cleaning) return cleaning;
  cleaning = (async () => {
    if (browser) await Promise.race([browser.close().catch(() => {}), sleep(5000)]);
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      try { process.kill(-server.pid, 'SIGTERM'); } catch {}
      if (await Promise.race([exited.then(() => true), sleep(3000).then(() => false)]) === false) {
        try { process.kill(-server.pid, 'SIGKILL'); } catch {}
      }
    }
    // helpers code-server left in its process group
    if (server) { try { process.kill(-server.pid, 'SIGKILL'); } catch {} }
    if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
    else console.log(`vscode tests: kept ${tmp}`);
  })();
  return cleaning;
}

for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(sig, () => {
    console.error(`vscode tests: ${sig}, stopping`);
    cleanup().finally(() => process.exit(code));
  });
}

async function main() {
  const suiteIndex = await buildSuite();

  const workspace = opts.workspace ?? path.join(tmp, 'workspace');
  if (!opts.workspace) {
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, 'hello.py'), 'print("hello from the test workspace")\n');
  }
  for (const d of ['user-data', 'extensions', 'xdg-config', 'xdg-data', 'xdg-cache']) {
    fs.mkdirSync(path.join(tmp, d), { recursive: true });
  }

  const port = await freePort();
  const origin = `127.0.0.1:${port}`;
  const logFd = fs.openSync(serverLog, 'a');
  const env = {
    ...process.env, // DOCKER_HOST, AGENT_SANDBOX_* ... reach the extension host
    XDG_CONFIG_HOME: path.join(tmp, 'xdg-config'),
    XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
    XDG_CACHE_HOME: path.join(tmp, 'xdg-cache'),
    EXTENSIONS_GALLERY: '{}', // no extension marketplace: the workbench would query open-vsx.org
    AGENT_SANDBOX_VSCODE_RESULTS: resultsFile,
    AGENT_SANDBOX_VSCODE_WORKSPACE: workspace,
  };
  if (opts.grep) env.AGENT_SANDBOX_VSCODE_GREP = opts.grep;
  delete env.VSCODE_IPC_HOOK_CLI; // never talk to an enclosing VS Code
  server = spawn(
    NODE24,
    [
      CODE_SERVER,
      '--bind-addr', origin,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      '--user-data-dir', path.join(tmp, 'user-data'),
      '--extensions-dir', path.join(tmp, 'extensions'),
      '--vscode-option', 'enable-smoke-test-driver',
    ],
    { cwd: workspace, env, detached: true, stdio: ['ignore', logFd, logFd] },
  );
  fs.closeSync(logFd);
  let serverExit;
  server.on('exit', (code, signal) => { serverExit = signal ?? code; });

  const deadline = Date.now() + 60_000;
  while ((await httpStatus(`http://${origin}/healthz`)) !== 200) {
    if (serverExit !== undefined) throw new Error(`code-server exited (${serverExit}) before answering`);
    if (Date.now() > deadline) throw new Error('code-server did not answer within 60 s');
    await sleep(100);
  }
  const tServer = Date.now();

  browser = await playwright.chromium.launch({
    executablePath: CHROMIUM,
    headless: true, // playwright gives each launch a new, empty profile
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = await browser.newPage();
  const exitCode = new Promise((resolve) => {
    page.exposeFunction('codeAutomationExit', (code) => resolve(Number(code)));
  });
  // The suite marks its console output (see suite/index.ts); the workbench's own logging goes to a file.
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const list = Array.isArray(args) ? args : [args];
    fs.appendFileSync(path.join(tmp, 'raw.log'), JSON.stringify([type, args]) + '\n');
    if (list[0] === OUTPUT_MARK) {
      (type === 'error' ? process.stderr : process.stdout).write(`${format(...list.slice(1))}\n`);
    } else {
      fs.appendFileSync(workbenchLog, `[${type}] ${format(...list)}\n`);
    }
  });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));

  const remote = (p) => `vscode-remote://${origin}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(opts.extension)],
    ['extensionTestsPath', remote(suiteIndex)],
    ['skipWelcome', 'true'],
  ];
  const url = `http://${origin}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  await page.goto(url, { waitUntil: 'domcontentloaded' });

  const code = await exitCode;
  const tDone = Date.now();
  let results;
  try { results = JSON.parse(fs.readFileSync(resultsFile, 'utf8')); } catch {}
  return { code, results, pageErrors, timings: { server: tServer - started, total: tDone - started } };
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
  const { code, results, pageErrors, timings } = await Promise.race([main(), timeout]);
  console.log(
    `vscode tests: extension host exited ${code}; code-server up after ${(timings.server / 1000).toFixed(1)} s, ` +
      `run took ${(timings.total / 1000).toFixed(1)} s`,
  );
  if (results) {
    exit = code === 0 && results.failed === 0 && results.passed > 0 ? 0 : 1;
    if (results.passed === 0 && results.failed === 0) console.error('vscode tests: no test ran');
    if (code !== 0 && results.failed === 0) console.error(`vscode tests: the extension host exited ${code} although no test failed`);
    console.log(`vscode: ${results.passed} passed, ${results.failed} failed, ${results.pending} skipped`);
  } else {
    if (pageErrors.length) console.error(`vscode tests: page errors:\n${pageErrors.join('\n')}`);
    console.error(`vscode tests: the suite reported no results; code-server log (tail):\n${logTail(serverLog)}`);
    console.log('vscode: 0 passed, 1 failed');
    exit = code === 0 ? 1 : code;
  }
} catch (err) {
  console.error(`vscode tests: FAILED: ${err?.message ?? err}`);
  console.error(`--- code-server log (tail of ${serverLog}) ---\n${logTail(serverLog)}\n---`);
  console.log('vscode: 0 passed, 1 failed');
  exit = 1;
} finally {
  clearTimeout(timer);
  await cleanup();
}
process.exit(exit);
