// `npm run package`: vsce package, failing when vsce warns (too many files, a missing field, a
// relative link it cannot resolve...), so that a warning stops the test run that packages the VSIX
// instead of scrolling by. Arguments are passed on (`npm run package -- --out out/agent-sandbox.vsix`).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const vsce = join(dirname(require.resolve('@vscode/vsce/package.json')), 'vsce');
const args = [
  vsce,
  'package',
  '--no-dependencies',
  '--allow-missing-repository',
  '--no-rewrite-relative-links',
  ...process.argv.slice(2),
];

const child = spawn(process.execPath, args, { stdio: ['inherit', 'pipe', 'pipe'] });
let output = '';
child.stdout.on('data', (chunk) => {
  output += chunk;
  process.stdout.write(chunk);
});
child.stderr.on('data', (chunk) => {
  output += chunk;
  process.stderr.write(chunk);
});
child.on('close', (code, signal) => {
  if (code !== 0) {
    process.exitCode = code ?? 1;
    if (signal) console.error(`vsce stopped by ${signal}`);
    return;
  }
  // vsce's own warnings (not npm's, which name its config): " WARNING  <text>", coloured on a terminal.
  const warnings = output
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((line) => /^\s*WARNING\b/.test(line));
  if (warnings.length) {
    console.error(
      `\nnpm run package: vsce warned (${warnings.length}); the VSIX must package without warnings. Fix the cause above.`,
    );
    process.exitCode = 1;
  }
});
