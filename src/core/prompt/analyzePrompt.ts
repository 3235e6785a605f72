/**
 * The analysis of one `.prompt` file: where its frontmatter is, what it says, and every problem at an
 * exact range. Pure: the editor, the Problems view and the CLI all show what this returns.
 */
import { isMap, isScalar, visit, type Document, type Node, type Pair } from 'yaml';
import { HARNESS_SANDBOX_MODES } from '../spec/frontmatterSpec';
import { findFrontmatter, type FrontmatterBlock } from './frontmatter';
import { HARNESS_KEYS, dotpromptFrontmatterSchema } from './frontmatterSchema';
import { ProblemList, type PromptProblem } from './problems';
import { checkSandbox, type SandboxStyle } from './sandboxCheck';
import type { PromptEnvironment } from './secretNames';
import type { PromptDialect } from './schemaDocs';
import { LineIndex } from './textPositions';
import { explainYamlErrors, noSpaceAfterColon, unresolvedAliasMessage } from './yamlErrors';
import { findPair, keyRange, pairsOf, parseYaml } from './yamlTree';
import { reportZodIssues } from './zodProblems';

export interface SandboxBlock {
  pair: Pair<Node, Node | null>;
  style: SandboxStyle;
  /** Offsets of the `sandbox` key in the file. */
  keyStart: number;
  keyEnd: number;
  value: unknown;
}

export interface PromptAnalysis {
  text: string;
  lines: LineIndex;
  frontmatter?: FrontmatterBlock;
  /** The parsed YAML; node ranges are relative to `frontmatter.start`. */
  doc?: Document.Parsed;
  data?: Record<string, unknown>;
  dialect: PromptDialect;
  sandbox?: SandboxBlock;
  problems: PromptProblem[];
}

const TOP_LEVEL_SCHEMA = dotpromptFrontmatterSchema.omit({ sandbox: true });
const HARNESS_ONLY_KEYS = ['timeout', 'network', 'environment', 'resources'];

/** Analyses a file; `environment` adds what only the editor knows (the secrets the user offers). */
export function analyzePrompt(text: string, environment: PromptEnvironment = {}): PromptAnalysis {
  const lines = new LineIndex(text);
  const problems = new ProblemList(lines);
  const frontmatter = findFrontmatter(text);
  const result = (extra: Partial<PromptAnalysis> = {}): PromptAnalysis => ({
    text,
    lines,
    frontmatter,
    dialect: 'dotprompt',
    ...extra,
    problems: problems.sorted(),
  });
  if (!frontmatter) return result();
  if (!frontmatter.close) {
    problems.add(
      'error',
      'frontmatter-unterminated',
      'The frontmatter has no closing line: end it with a line of three dashes (---) before the prompt text.',
      frontmatter.openStart,
      frontmatter.openEnd,
    );
    return result();
  }
  const base = frontmatter.start;
  const yamlText = text.slice(frontmatter.start, frontmatter.end);
  const doc = parseYaml(yamlText);
  const mistakes = explainYamlErrors(doc, yamlText, lines.position(base).line);
  for (const mistake of mistakes)
    problems.add('error', 'yaml-syntax', mistake.message, base + mistake.start, base + mistake.end);
  // In a frontmatter that does not parse, a duplicate key is often a follow-on of the syntax error.
  for (const error of mistakes.length > 0 ? [] : doc.errors.filter((e) => e.code === 'DUPLICATE_KEY')) {
    const pair = duplicateAt(doc, error.pos[0]);
    const range = pair ? keyRange(pair) : undefined;
    const [start, end] = range ?? error.pos;
    problems.add(
      'error',
      'duplicate-key',
      `Duplicate key "${text.slice(base + start, base + end)}": a key may appear only once in a block.`,
      base + start,
      base + end,
    );
  }
  for (const warning of doc.warnings)
    problems.add('warning', 'yaml-warning', warning.message, base + warning.pos[0], base + warning.pos[1]);
  if (mistakes.length > 0) return result({ doc });
  const aliases = unresolvedAliases(doc);
  for (const alias of aliases)
    problems.add(
      'error',
      'yaml-syntax',
      unresolvedAliasMessage(yamlText, alias.source, alias.range),
      base + alias.range[0],
      base + alias.range[1],
    );
  if (aliases.length > 0) return result({ doc });

  const root = doc.contents as Node | null;
  if (root === null || (isScalar(root) && root.value === null)) return result({ doc });
  if (!isMap(root)) {
    const range = root.range ?? [0, 0];
    // `model:gpt` alone parses as one piece of text.
    const unspaced = isScalar(root) ? noSpaceAfterColon(yamlText, range[0], range[1]) : undefined;
    problems.add(
      'error',
      'frontmatter-not-a-map',
      unspaced?.message ?? 'The frontmatter must be a block of keys (model:, sandbox:, ...).',
      base + (unspaced?.start ?? range[0]),
      base + (unspaced?.end ?? range[1]),
    );
    return result({ doc });
  }
  let data: Record<string, unknown>;
  try {
    data = doc.toJS({ maxAliasCount: 1000 }) as Record<string, unknown>;
  } catch (error) {
    problems.add('error', 'yaml-syntax', (error as Error).message, frontmatter.openStart, frontmatter.openEnd);
    return result({ doc });
  }

  // Dotprompt's and the platforms' own keys: never errors, but a value of the wrong kind is worth a warning
  // (an empty one, like `tools:` with nothing after it, means none).
  const topLevel = TOP_LEVEL_SCHEMA.safeParse(
    Object.fromEntries(Object.entries(data).filter(([, value]) => value !== null)),
  );
  if (!topLevel.success) reportZodIssues(topLevel.error.issues, root, [], { problems, base }, 'warning');

  const harnessFile = HARNESS_KEYS.some((key) => key in data);
  const pair = findPair(root, 'sandbox');
  let sandbox: SandboxBlock | undefined;
  if (pair) {
    const style = sandboxStyle(pair, harnessFile);
    const range = keyRange(pair) ?? [0, 0];
    sandbox = { pair, style, keyStart: base + range[0], keyEnd: base + range[1], value: data.sandbox };
    checkSandbox(pair, style, { problems, base, lines, environment });
  }
  const dialect: PromptDialect = harnessFile || sandbox?.style === 'harness' ? 'harness' : 'dotprompt';
  return result({ doc, data, dialect, sandbox });
}

function sandboxStyle(pair: Pair<Node, Node | null>, harnessFile: boolean): SandboxStyle {
  const node = pair.value;
  if (isScalar(node) && typeof node.value === 'string') return 'shorthand';
  if (!isMap(node)) return 'invalid';
  const mode = findPair(node, 'mode')?.value;
  const modeValue = isScalar(mode) ? mode.value : undefined;
  if (typeof modeValue === 'string' && (HARNESS_SANDBOX_MODES as readonly string[]).includes(modeValue))
    return 'harness';
  const keys = pairsOf(node).map((entry) => entry.key);
  if (
    harnessFile &&
    modeValue === undefined &&
    keys.length > 0 &&
    keys.every((key) => HARNESS_ONLY_KEYS.includes(key) || key === 'image')
  )
    return 'harness';
  return 'object';
}

/** The second of two equal keys, whose position the parser reports. */
function duplicateAt(doc: Document.Parsed, offset: number): Pair | undefined {
  let found: Pair | undefined;
  visit(doc, {
    Pair(_, pair) {
      const range = keyRange(pair);
      if (range && range[0] <= offset && offset < Math.max(range[1], range[0] + 1)) {
        found = pair;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

function unresolvedAliases(doc: Document.Parsed): { source: string; range: [number, number] }[] {
  const found: { source: string; range: [number, number] }[] = [];
  visit(doc, {
    Alias(_, alias) {
      if (!alias.resolve(doc) && alias.range)
        found.push({ source: alias.source, range: [alias.range[0], alias.range[1]] });
    },
  });
  return found;
}

/** The agent's name: metadata.name, the top-level name (Station's harness), or the file's name. */
export function agentName(analysis: PromptAnalysis, fileName: string): string {
  const metadata = analysis.data?.metadata;
  const fromMetadata =
    metadata && typeof metadata === 'object' ? (metadata as Record<string, unknown>).name : undefined;
  const named =
    typeof fromMetadata === 'string' && fromMetadata.trim()
      ? fromMetadata
      : typeof analysis.data?.name === 'string' && analysis.data.name.trim()
        ? analysis.data.name
        : undefined;
  return (named ?? fileName.replace(/^.*[\\/]/, '').replace(/\.prompt$/, '')).trim();
}

/** An agent name as a session scope key (letters, digits, ".", "_", "-"; at most 63). */
export function agentScopeKey(name: string): string {
  const key = name
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return key || 'agent';
}
