/** Rules between the fields of a sandbox block that no single field's schema can say. */
import { isMap, isScalar, type Node, type YAMLMap } from 'yaml';
import type { PromptFix } from './problems';
import type { PromptEnvironment } from './secretNames';
import type { LineIndex } from './textPositions';
import { findPair, keyRange, valueRange } from './yamlTree';
import type { CheckContext } from './zodProblems';

export interface RuleContext extends CheckContext {
  lines: LineIndex;
  /** What the editor knows beyond the text (the secrets the user offers). */
  environment?: PromptEnvironment;
}

type Block = Record<string, unknown>;

export function checkSandboxRules(map: YAMLMap, block: Block, context: RuleContext): void {
  const mode = block.mode;
  const computeMode = mode === undefined || mode === 'compute';
  const runtime = typeof block.runtime === 'string' ? block.runtime : undefined;
  const image = typeof block.image === 'string' && block.image !== '' ? block.image : undefined;
  const at = (key: string, whole = false): [number, number] | undefined => {
    const pair = findPair(map, key);
    const range = pair && (whole ? valueRange({ node: pair.value, pair }) : keyRange(pair));
    return range && [context.base + range[0], context.base + range[1]];
  };

  if (computeMode && runtime === 'linux') {
    const range = at('runtime', true)!;
    context.problems.add(
      'error',
      'mode-conflict',
      `runtime linux is only available in code mode (mode: code)${mode ? ', not compute mode' : '; the default mode is compute'}`,
      range[0],
      range[1],
      [codeModeFix(map, context, true)],
    );
  }
  if (computeMode && block.session !== undefined && block.session !== null) {
    const range = at('session')!;
    context.problems.add(
      'warning',
      'mode-conflict',
      'session only matters in code mode (mode: code): in compute mode every call runs in a fresh sandbox, so it is ignored',
      range[0],
      range[1],
      [codeModeFix(map, context, false)],
    );
  }
  const effectiveRuntime = runtime ?? 'python';
  if (nonEmptyList(block.pip_packages) && effectiveRuntime !== 'python' && !image) {
    const range = at('pip_packages')!;
    context.problems.add(
      'warning',
      'package-runtime',
      `pip_packages need Python, which the ${effectiveRuntime} runtime's image does not have: use runtime: python, or an image with pip`,
      range[0],
      range[1],
    );
  }
  if (nonEmptyList(block.npm_packages) && effectiveRuntime !== 'node') {
    const range = at('npm_packages')!;
    const where = image
      ? `make sure the image ${image} has npm, or use runtime: node`
      : `the ${effectiveRuntime} runtime's image has no npm: use runtime: node, or an image with npm`;
    context.problems.add('warning', 'package-runtime', `npm_packages need Node.js: ${where}`, range[0], range[1]);
  }

  const limits = isMap(findPair(map, 'limits')?.value) ? (findPair(map, 'limits')!.value as YAMLMap) : undefined;
  const limitValues = (block.limits && typeof block.limits === 'object' ? block.limits : {}) as Block;
  for (const key of ['timeout_seconds', 'max_stdout_bytes']) {
    if (block[key] !== undefined && limitValues[key] !== undefined && block[key] !== limitValues[key]) {
      const range = at(key)!;
      context.problems.add(
        'warning',
        'overridden-value',
        `${key} is ignored: limits.${key} (${String(limitValues[key])}) is used`,
        range[0],
        range[1],
      );
    }
  }
  if (limits) {
    for (const [used, ignored] of [
      ['memory', 'memory_mb'],
      ['cpu', 'cpu_millicores'],
    ] as const) {
      const pair = findPair(limits, ignored);
      const range = pair && keyRange(pair);
      if (limitValues[used] !== undefined && range) {
        context.problems.add(
          'warning',
          'overridden-value',
          `limits.${ignored} is ignored: limits.${used} is used`,
          context.base + range[0],
          context.base + range[1],
        );
      }
    }
  }
}

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

/** Sets `mode: code`: changes the mode value (compute), or adds the key before the block's first key. */
function codeModeFix(map: YAMLMap, context: RuleContext, preferred: boolean): PromptFix {
  const title = 'Use code mode (mode: code)';
  const modePair = findPair(map, 'mode');
  const value = modePair?.value;
  if (modePair && isScalar(value) && value.range && value.range[1] > value.range[0]) {
    return {
      title,
      preferred,
      edits: [{ start: context.base + value.range[0], end: context.base + value.range[1], newText: 'code' }],
    };
  }
  const first = (map.items[0]?.key ?? null) as Node | null;
  const start = context.base + (first?.range?.[0] ?? map.range![0]);
  const newText = map.flow ? 'mode: code, ' : `mode: code\n${' '.repeat(context.lines.position(start).character)}`;
  return { title, preferred, edits: [{ start, end: start, newText }] };
}
