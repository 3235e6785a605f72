import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// No module of src imports itself back through others: a cycle makes load order matter and hides
// which layer depends on which. (A lint plugin for this needs native bindings our registry lacks.)
const SRC = resolve(__dirname, '..', '..', 'src');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Imports that exist at run time (type-only imports leave no edge). */
function edges(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    if (/^\s*(?:import|export)\s+type\s/.test(match[0].trimStart())) continue;
    const base = resolve(dirname(file), match[1]!);
    const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
    if (target) found.push(target);
  }
  return found;
}

export function findCycles(files: readonly string[]): string[][] {
  const graph = new Map(files.map((file) => [file, edges(file)]));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

describe('imports: no cycles in src', () => {
  it('no module reaches itself through its imports', () => {
    const cycles = findCycles(sources(SRC)).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' → '));
    assert.deepEqual(cycles, []);
  });
});
