/** Checks a `sandbox:` block: the shorthand, the object form (with unknown keys and rules), and the agent harness's form. */
import { isMap, isScalar, isSeq, type Node, type Pair } from 'yaml';
import { frontmatterLimitsSchema, frontmatterSandboxObjectSchema, harnessSandboxSchema } from '../spec/frontmatterSpec';
import { RUNTIMES } from '../spec/spec';
import { nearMiss } from './nearMiss';
import { checkSandboxRules, type RuleContext } from './sandboxRules';
import { checkSecretNames } from './secretNames';
import { keyRange, pairsOf, valueRange } from './yamlTree';
import { describeValue, reportZodIssues } from './zodProblems';

export type SandboxStyle = 'shorthand' | 'object' | 'harness' | 'invalid';

const OBJECT_KEYS = Object.keys(frontmatterSandboxObjectSchema.shape);
const LIMIT_KEYS = Object.keys(frontmatterLimitsSchema.shape);
/** Spellings of other dialects that mean one of our keys. */
const ALIASES: Record<string, string> = {
  timeout: 'timeout_seconds',
  network: 'allow_network',
  resources: 'limits',
  packages: 'pip_packages',
  pip: 'pip_packages',
  npm: 'npm_packages',
};
const LIMIT_ALIASES: Record<string, string> = {
  timeout: 'timeout_seconds',
  cpus: 'cpu',
  memory_bytes: 'memory',
  disk_bytes: 'disk',
  storage: 'disk',
  files: 'inodes',
};

export function checkSandbox(pair: Pair<Node, Node | null>, style: SandboxStyle, context: RuleContext): void {
  const node = pair.value;
  if (style === 'harness') {
    // Station's agent harness reads this block; check types loosely, never its keys.
    const parsed = harnessSandboxSchema.safeParse(node?.toJSON());
    if (!parsed.success) reportZodIssues(parsed.error.issues, node, ['sandbox'], context, 'warning');
    return;
  }
  if (style === 'shorthand') return checkShorthand(pair, context);
  if (!isMap(node)) {
    const range = valueRange({ node, pair });
    const value: unknown = isScalar(node) ? node.value : isSeq(node) ? [] : undefined;
    if (!range) return;
    if (value === null || value === undefined) {
      context.problems.add(
        'warning',
        'invalid-type',
        'The sandbox block is empty: write a runtime (sandbox: python) or a block of settings, or remove it.',
        context.base + range[0],
        context.base + range[1],
      );
    } else {
      context.problems.add(
        'error',
        'invalid-type',
        `sandbox must be a runtime (${RUNTIMES.join(', ')}) or a block of settings, not ${describeValue(value)}`,
        context.base + range[0],
        context.base + range[1],
      );
    }
    return;
  }
  const value = node.toJSON() as Record<string, unknown>;
  const parsed = frontmatterSandboxObjectSchema.safeParse(value);
  if (!parsed.success) reportZodIssues(parsed.error.issues, node, ['sandbox'], context);
  reportUnknownKeys(node, OBJECT_KEYS, ALIASES, 'the sandbox block', context);
  const limits = pairsOf(node).find((entry) => entry.key === 'limits')?.pair.value;
  if (isMap(limits)) reportUnknownKeys(limits, LIMIT_KEYS, LIMIT_ALIASES, 'sandbox.limits', context);
  checkSandboxRules(node, value, context);
  checkSecretNames(node, context);
}

function checkShorthand(pair: Pair<Node, Node | null>, context: RuleContext): void {
  const node = pair.value;
  const range = valueRange({ node, pair });
  if (!isScalar(node) || typeof node.value !== 'string' || !range) return;
  const start = context.base + range[0];
  const end = context.base + range[1];
  const runtime = node.value;
  if (!(RUNTIMES as readonly string[]).includes(runtime)) {
    const suggestion = nearMiss(runtime, RUNTIMES);
    context.problems.add(
      'error',
      'invalid-value',
      `sandbox "${runtime}" is not a runtime: use ${RUNTIMES.join(', ')}, or a block of settings${suggestion ? `; did you mean ${suggestion}?` : ''}`,
      start,
      end,
      suggestion
        ? [{ title: `Change to ${suggestion}`, preferred: true, edits: [{ start, end, newText: suggestion }] }]
        : [],
    );
    return;
  }
  if (runtime === 'linux') {
    // The shorthand means compute mode; linux needs a session. Rewrite it as a block with mode: code.
    const key = keyRange(pair);
    const indent = key ? ' '.repeat(context.lines.position(context.base + key[0]).character + 2) : '  ';
    const fix = key
      ? [
          {
            title: 'Use code mode (mode: code)',
            preferred: true,
            edits: [{ start: context.base + key[1], end, newText: `:\n${indent}mode: code\n${indent}runtime: linux` }],
          },
        ]
      : [];
    context.problems.add(
      'error',
      'mode-conflict',
      'runtime linux is only available in code mode, and sandbox: linux means compute mode: write a block with mode: code and runtime: linux',
      start,
      end,
      fix,
    );
  }
}

function reportUnknownKeys(
  map: Node,
  known: readonly string[],
  aliases: Record<string, string>,
  where: string,
  context: RuleContext,
): void {
  for (const { key, pair } of pairsOf(map)) {
    if (known.includes(key)) continue;
    const range = keyRange(pair);
    if (!range) continue;
    const start = context.base + range[0];
    const end = context.base + range[1];
    const suggestion = aliases[key] && known.includes(aliases[key]) ? aliases[key] : nearMiss(key, known);
    if (where === 'the sandbox block' && LIMIT_KEYS.includes(key)) {
      context.problems.add(
        'warning',
        'unknown-key',
        `"${key}" is a limit: write it under limits:, here it is ignored.`,
        start,
        end,
      );
    } else if (suggestion && !pairsOf(map).some((entry) => entry.key === suggestion)) {
      context.problems.add(
        'warning',
        'unknown-key',
        `Unknown key "${key}" in ${where}; did you mean ${suggestion}?`,
        start,
        end,
        [{ title: `Change to ${suggestion}`, preferred: true, edits: [{ start, end, newText: suggestion }] }],
      );
    } else {
      context.problems.add(
        'warning',
        'unknown-key',
        `Unknown key "${key}" in ${where}: it is ignored. Known keys: ${known.join(', ')}.`,
        start,
        end,
      );
    }
  }
}
