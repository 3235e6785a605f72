/**
 * The sandbox block's `secrets:`: names of secrets the user offers to sandboxes. Their syntax is the
 * schema's (frontmatterSpec.ts); here, what only the user's offer can say: VS Code passes the entries
 * of `agentSandbox.secrets`, so a name not offered is a warning, completions offer the names, and a
 * hover gives a name's binding. Without the entries (the CLI's validate), names are checked for syntax only.
 */
import { isScalar, isSeq, type Node, type Scalar, type YAMLMap } from 'yaml';
import { describeSecret, secretSettingSchema, type SecretEntry } from '../secrets/catalog';
import { nearMiss } from './nearMiss';
import type { PromptFix } from './problems';
import { findPair } from './yamlTree';
import type { CheckContext } from './zodProblems';

/** What the editor knows beyond the file's text. */
export interface PromptEnvironment {
  /** The secrets the user offers (VS Code's agentSandbox.secrets); absent where they are not known. */
  readonly secrets?: readonly SecretEntry[];
}

/** The command that offers a secret, as the palette shows it. */
export const ADD_SECRET_COMMAND = 'Sandbox: Add Secret';

const SECRET_NAME = secretSettingSchema.in.shape.name;

/** The names of a `secrets:` list, with their nodes (items that are no text are the schema's problem). */
function secretItems(block: YAMLMap): Scalar<string>[] {
  const list = findPair(block, 'secrets')?.value;
  if (!isSeq(list)) return [];
  return list.items.filter(
    (item): item is Scalar<string> => isScalar(item) && typeof item.value === 'string' && Boolean(item.range),
  );
}

/** A name listed twice, and (with the user's offer known) a name the user does not offer. */
export function checkSecretNames(block: YAMLMap, context: CheckContext & { environment?: PromptEnvironment }): void {
  const offered = context.environment?.secrets;
  const seen = new Set<string>();
  for (const item of secretItems(block)) {
    const name = item.value;
    if (!SECRET_NAME.safeParse(name).success) continue;
    const start = context.base + item.range![0];
    const end = context.base + item.range![1];
    if (seen.has(name)) {
      context.problems.add(
        'warning',
        'duplicate-secret',
        `The secret ${name} is listed twice in sandbox.secrets: keep one.`,
        start,
        end,
      );
      continue;
    }
    seen.add(name);
    if (!offered || offered.some((entry) => entry.name === name)) continue;
    const names = offered.map((entry) => entry.name);
    const suggestion = nearMiss(name, names);
    const fixes: PromptFix[] = suggestion
      ? [{ title: `Change to ${suggestion}`, preferred: true, edits: [{ start, end, newText: suggestion }] }]
      : [];
    const offer = names.length
      ? `The secrets offered are ${names.join(', ')}; to offer another, run "${ADD_SECRET_COMMAND}"`
      : `No secret is offered yet: to offer one, run "${ADD_SECRET_COMMAND}"`;
    context.problems.add(
      'warning',
      'unknown-secret',
      `No secret named "${name}" is offered to sandboxes, so the agent's sandbox would not open with it${suggestion ? `; did you mean ${suggestion}?` : '.'} ${offer} (it adds to agentSandbox.secrets, in your user settings).`,
      start,
      end,
      fixes,
    );
  }
}

/** The offered secrets a `secrets:` list may add, minus those it already names. */
export function secretCandidates(environment: PromptEnvironment, listed: ReadonlySet<string>): SecretEntry[] {
  return (environment.secrets ?? []).filter((entry) => !listed.has(entry.name));
}

/** A name of `secrets:` in words, for its hover. */
export function secretNameDoc(name: string, environment: PromptEnvironment): string | undefined {
  const entry = environment.secrets?.find((candidate) => candidate.name === name);
  if (entry) return `\`${name}\`: ${secretEntryDoc(entry)}`;
  if (!environment.secrets || !SECRET_NAME.safeParse(name).success) return undefined;
  return `\`${name}\`: not offered to sandboxes. To offer it, run "${ADD_SECRET_COMMAND}".`;
}

/** An offered secret in words: its binding, and what the sandbox holds. */
export function secretEntryDoc(entry: SecretEntry): string {
  return entry.inside
    ? `${describeSecret(entry)}: the variable ${entry.name} holds the value, shown as [secret:${entry.name}] in what comes back.`
    : `${describeSecret(entry)}: the variable ${entry.name} holds a placeholder; the value is added to requests to those domains, which the sandbox then reaches, and never enters it.`;
}

/** The item of a `secrets:` list at an offset (relative to the YAML), if any. */
export function secretItemAt(list: Node | null, offset: number): Scalar<string> | undefined {
  if (!isSeq(list)) return undefined;
  return list.items.find(
    (item): item is Scalar<string> =>
      isScalar(item) &&
      typeof item.value === 'string' &&
      Boolean(item.range) &&
      offset >= item.range![0] &&
      offset <= item.range![1],
  );
}
