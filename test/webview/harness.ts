/**
 * Loads the built panel (dist/webview.js and .css) in Debian's Chromium through playwright-core, with
 * a stand-in for acquireVsCodeApi that records what the panel posts and keeps its state.
 */
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { HostToWebview, WebviewToHost } from '../../src/shared/protocol';
import { themeCss, type THEMES } from './themes';

const ROOT = resolve(__dirname, '../..');

export async function launch(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(executablePath))
    throw new Error(`${executablePath} is missing: run bash scripts/provision-vscode.sh`);
  return chromium.launch({
    executablePath,
    headless: true,
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
}

/** Serves the built assets and a page like the one the extension makes (same CSP shape). */
export async function serve(): Promise<{ url: string; close(): Promise<void> }> {
  for (const asset of ['webview.js', 'webview.css'])
    if (!existsSync(join(ROOT, 'dist', asset))) throw new Error(`dist/${asset} is missing: run node esbuild.mjs`);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/dist/')) {
      const file = join(ROOT, 'dist', url.pathname.slice('/dist/'.length).replace(/\.\./g, ''));
      if (!existsSync(file)) return void response.writeHead(404).end();
      response
        .writeHead(200, { 'content-type': file.endsWith('.css') ? 'text/css' : 'text/javascript' })
        .end(readFileSync(file));
      return;
    }
    const theme = (url.searchParams.get('theme') ?? 'dark') as keyof typeof THEMES;
    const nonce = 'test-nonce';
    response.writeHead(200, {
      'content-type': 'text/html',
      'content-security-policy': `default-src 'none'; style-src 'self' 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self' data:`,
    }).end(`<!DOCTYPE html>
<html><head><meta charset="UTF-8"><style nonce="${nonce}">${themeCss(theme)}</style><link rel="stylesheet" nonce="${nonce}" href="/dist/webview.css"></head>
<body class="vscode-${theme}"><main id="root"></main><script nonce="${nonce}" src="/dist/webview.js"></script></body></html>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((done) => server.close(() => done())) };
}

export interface PanelPage {
  page: Page;
  send(message: HostToWebview): Promise<void>;
  posted(): Promise<WebviewToHost[]>;
  savedState(): Promise<unknown>;
}

export async function openPanel(
  browser: Browser,
  url: string,
  options: { theme?: keyof typeof THEMES; state?: unknown } = {},
): Promise<PanelPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 420 } });
  page.on('pageerror', (error: Error) => {
    throw error;
  });
  // A string, not a function: the test runner's transpiler would add helpers the page does not have.
  await page.addInitScript(`
    window.__posted = [];
    window.__state = ${JSON.stringify(options.state ?? null)} ?? undefined;
    window.acquireVsCodeApi = () => ({
      postMessage: (message) => window.__posted.push(message),
      getState: () => window.__state,
      setState: (state) => { window.__state = state; },
    });
  `);
  await page.goto(`${url}?theme=${options.theme ?? 'dark'}`);
  await page.waitForFunction(() =>
    (window as unknown as { __posted: { type: string }[] }).__posted.some((message) => message.type === 'ready'),
  );
  return {
    page,
    send: async (message) => {
      await page.evaluate((data) => window.postMessage(data, '*'), message);
      await settled(page);
    },
    posted: () => page.evaluate(() => (window as unknown as { __posted: WebviewToHost[] }).__posted),
    savedState: () => page.evaluate(() => (window as unknown as { __state: unknown }).__state),
  };
}

/**
 * Until the page has handled what was posted to it and drawn the result: a message event is a task
 * queued before this timer's, and the controls update their shadow DOM by the next frame.
 */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(
    () => new Promise<void>((resolve) => setTimeout(() => requestAnimationFrame(() => setTimeout(resolve, 0)), 0)),
  );
}
