// Bundles the extension (Node, `vscode` external), the CLI (Node) and the panel's webview (browser).
import * as esbuild from 'esbuild';
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

const node = {
  ...common,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // Optional native helpers of ssh2 (pulled in by docker-modem); the pure-JS paths are used without them.
  external: ['vscode', 'cpu-features', './crypto/build/Release/sshcrypto.node'],
};

const builds = [
  { ...node, entryPoints: { extension: 'src/vscode/extension.ts' }, outdir: 'dist' },
  { ...node, entryPoints: { cli: 'src/cli/main.ts' }, outdir: 'dist', banner: { js: '#!/usr/bin/env node' } },
  { ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: { webview: 'webview/main.ts' }, outdir: 'dist' },
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
