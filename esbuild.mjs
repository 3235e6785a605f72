// Bundles the extension (Node, `vscode` external), the CLI and the allowlist's proxy process (Node), and
// the panel's webview (browser).
import * as esbuild from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyVirtualEngineAssets, virtualEngineBuild } from './scripts/buildVirtualEngine.mjs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const quiet = process.argv.includes('--quiet');

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: quiet ? 'warning' : 'info',
  legalComments: 'none',
};

/**
 * Keeps the Node bundles lean (README, Performance): drops what they never run and defers what they
 * rarely run. dockerode's BuildKit sessions pull in gRPC and protobufjs (about 400 KB) for image
 * builds we never do; zod ships its messages in 40 languages where English is used; ssh2 (a third of
 * the rest) is needed only for an ssh:// engine, so it is a bundle of its own, dist/ssh.js, which
 * docker-modem loads on the first such connection.
 */
const lean = {
  name: 'lean-dependencies',
  setup(build) {
    const inside = (importer, folder) => importer.includes(`${sep}node_modules${sep}${folder}${sep}`);
    build.onResolve({ filter: /^\.\/(session|buildkit)$/ }, (args) =>
      inside(args.importer, 'dockerode') ? { path: args.path, namespace: 'lean-stub' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lean-stub' }, (args) => ({
      contents: `module.exports = function () { throw new Error('dockerode ${args.path.slice(2)} (BuildKit) is not part of the Agent Sandbox bundle'); };`,
      loader: 'js',
    }));
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      inside(args.importer, 'zod')
        ? { path: join(args.resolveDir, args.path), namespace: 'lean-zod-locales' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lean-zod-locales' }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
    build.onResolve({ filter: /^\.\/ssh$/ }, (args) =>
      inside(args.importer, 'docker-modem') ? { path: './ssh.js', external: true } : undefined,
    );
    build.onLoad({ filter: /[\\/]docker-modem[\\/]lib[\\/]modem\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const lazy = source.replace(
        "ssh = require('./ssh'),",
        "ssh = function (options) { return require('./ssh')(options); },",
      );
      if (lazy === source)
        throw new Error(
          'esbuild.mjs: docker-modem changed; update the lazy ssh2 require in the lean-dependencies plugin',
        );
      return { contents: lazy, loader: 'js' };
    });
  },
};

const node = {
  ...common,
  plugins: [lean],
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode'],
};

/**
 * The extension is two bundles: dist/extension.js, activation alone (stand-ins, nothing but `vscode`),
 * and dist/compositionRoot.js, everything else, loaded on first use. In the second, `vscode` is
 * src/vscode/hostApi.ts, whose registrations fill the first one's stand-ins.
 */
const hostApi = {
  name: 'host-api',
  setup(build) {
    const file = fileURLToPath(new URL('./src/vscode/hostApi.ts', import.meta.url));
    build.onResolve({ filter: /^vscode$/ }, (args) =>
      args.importer === file ? { path: 'vscode', external: true } : { path: file, namespace: 'host-api' },
    );
    build.onLoad({ filter: /.*/, namespace: 'host-api' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)}).hostVscode;`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

const builds = [
  {
    ...node,
    entryPoints: { extension: 'src/vscode/extension.ts' },
    outdir: 'dist',
    external: ['vscode', './compositionRoot.js'],
  },
  {
    ...node,
    plugins: [lean, hostApi],
    entryPoints: { compositionRoot: 'src/vscode/compositionRoot.ts' },
    outdir: 'dist',
  },
  // The CLI: dist/cli.js is a small launcher that loads dist/cli-main.js with V8's code cache (src/cli/launcher.ts).
  { ...node, entryPoints: { 'cli-main': 'src/cli/main.ts' }, outdir: 'dist' },
  { ...node, entryPoints: { cli: 'src/cli/launcher.ts' }, outdir: 'dist', banner: { js: '#!/usr/bin/env node' } },
  // The allowlist's proxy process, one per allowlist sandbox: the proxy alone, not the whole CLI.
  { ...node, entryPoints: { egressProxy: 'src/cli/egressProxyMain.ts' }, outdir: 'dist' },
  // Optional native helpers of ssh2; the pure-JS paths are used without them.
  {
    ...node,
    plugins: [],
    entryPoints: { ssh: 'node_modules/docker-modem/lib/ssh.js' },
    outdir: 'dist',
    external: ['cpu-features', './crypto/build/Release/sshcrypto.node'],
  },
  {
    ...common,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    entryPoints: { webview: 'webview/main.ts' },
    outdir: 'dist',
  },
  // The virtual engine's worker with just-bash, in dist/just-bash/ (see scripts/buildVirtualEngine.mjs).
  virtualEngineBuild(common),
];
await copyVirtualEngineAssets();

if (watch) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
