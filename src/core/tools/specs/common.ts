/** Schema pieces, description sentences and call descriptions that several tools share. */
import { z } from 'zod';
import type { TargetRequest, Words } from '../toolSpec';
import { words } from '../toolSpec';
import { RUN_TARGET, type TargetView } from '../reach';
import { displayName } from '../../results/displayName';
import { DEFAULT_SESSION } from '../../sessions/sessions';
import { allowEntrySchema } from '../../network/allowlist';
import { ENV_NAME } from '../../secrets/secrets';

export const sandboxIdField = z
  .string()
  .min(1)
  .max(128)
  .describe(
    'The sandbox to use: the sandbox_id returned by sandbox_open. Omit it to use the default sandbox of this workspace, opened on first use.',
  );

export const pathField = z
  .string()
  .min(1)
  .max(4096)
  .describe('A path relative to /workspace, or an absolute path inside /workspace.');

export const timeoutSecondsField = z
  .number()
  .min(0.1)
  .max(3600)
  .describe('Seconds the command may run before it is killed; defaults to the sandbox setting (120 s).');

export const fileInputField = z
  .object({
    path: pathField,
    content: z
      .string()
      .max(16 * 1024 * 1024)
      .describe('The file content: text, or base64 when encoding is "base64".'),
    encoding: z.enum(['utf8', 'base64']).optional().describe('utf8 (default) for text, base64 for binary content.'),
    executable: z.boolean().optional().describe('Make the file executable (mode 755).'),
  })
  .strict();

export const storeKeyField = z.string().min(1).max(100);

export const workspacePathField = z.string().min(1).max(4096);

export const SANDBOX_ID_NOTE =
  'sandbox_id is optional: without it the default sandbox of this workspace is used, and opened on first use.';

export const PATH_NOTE = 'Paths are relative to /workspace (absolute paths must stay inside /workspace).';

export const NEXT_NOTE = 'When something fails, the text ends with a "Next:" line that says what to do.';

/** The budget of a result whose size is fixed and small. */
export const SMALL_RESULT = 'a few lines';

/** The budget of results that carry program output or file content. */
export const OUTPUT_BUDGET =
  'headline first, in parts of at most 8,000 characters; output cut head-and-tail with exact counts to fit the chat’s token budget (48,000 characters at most)';

export const fileMode = (executable: boolean | undefined) => (executable ? 0o755 : undefined);

/** The session a tool call without its own open request targets. */
export function sessionTarget(input: { sandbox_id?: string }): TargetRequest {
  return { kind: 'session', sandboxId: input.sandbox_id };
}

/** The sandbox's name as people read it in a confirmation. */
export function targetName(target: TargetView): string {
  return target.sandboxId === RUN_TARGET ? 'a one-off sandbox' : target.sandboxId || DEFAULT_SESSION;
}

/** "Workspace: read-write at /workspace. Network: off." for a session, opened or about to be. */
export function reachWords(target: TargetView): Words {
  if (target.unseen)
    return words(
      'Workspace and network: those of sandbox {0}, which this window has not seen open yet.',
      target.sandboxId,
    );
  return words(
    'Workspace: {0}. Network: {1}.{2}{3}',
    accessPhrase(target.workspaceAccess),
    networkPhrase(target),
    secretsPhrase(target),
    target.open ? '' : ' (the sandbox opens with this call)',
  );
}

/** " Secrets: GITHUB_TOKEN → api.github.com (Authorization header)." for a sandbox with secrets the user offers, else "". */
export function secretsPhrase(target: { secrets?: readonly string[] }): string {
  return target.secrets?.length ? ` Secrets: ${target.secrets.join('; ')}.` : '';
}

/** A tool input: secrets the user offers to sandboxes, by name. */
export const secretsField = z
  .array(z.string().regex(ENV_NAME, 'a secret name is a variable name, like GITHUB_TOKEN'))
  .min(1)
  .max(20)
  .describe(
    'Secrets the user offers to sandboxes, by name (the variable the sandbox gets). A bound secret holds a placeholder: the network proxy adds the value only in requests to its domains, which the sandbox then reaches. Never ask for one to print it.',
  );

/** "on", "off", or "only pypi.org, files.pythonhosted.org" (its allowlist, through the proxy). */
export function networkPhrase(target: { network: boolean; networkAllow: readonly string[] }): string {
  if (target.network) return 'on';
  return target.networkAllow.length ? `only ${target.networkAllow.join(', ')}` : 'off';
}

/** A tool input: the names a sandbox should reach on the network, and nothing else. */
export const allowDomainsField = z
  .array(
    z
      .string()
      .max(260)
      .refine((text) => allowEntrySchema.safeParse(text).success, {
        message:
          'an entry is a domain (api.github.com), a wildcard for its subdomains (*.githubusercontent.com) or localhost:PORT; IP addresses are not accepted',
      }),
  )
  .min(1)
  .max(50)
  .describe(
    "Names the sandbox may reach on the network, and nothing else: domains (pypi.org), *.example.com for subdomains, localhost:PORT for a port of the user's machine. Granted within the user's allowlist; the result says what you got.",
  );

export function accessPhrase(access: 'none' | 'copy' | 'ro' | 'rw'): string {
  switch (access) {
    case 'copy':
      return 'copied into a private /workspace (your files are not changed)';
    case 'ro':
      return 'read-only at /workspace';
    case 'rw':
      return 'read-write at /workspace (changes land in your files)';
    default:
      return 'not visible';
  }
}

/**
 * Text from the model (a path, a working directory) as inline code in a confirmation: on one line,
 * its line breaks and other unsafe characters escaped (as displayName does), and fenced with more
 * backticks than it holds, so that it cannot close the code span and add lines of its own, such as
 * a forged "Workspace: not visible." above the real one.
 */
export function codeSpan(text: string): string {
  const shown = displayName(text);
  const longest = Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = shown.startsWith('`') || shown.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${shown}${pad}${fence}`;
}

/** Code shown in a confirmation, cut to its first lines. */
export function shownCode(text: string, maxLines = 40): string {
  const lines = text.split('\n');
  return lines.length <= maxLines
    ? text
    : `${lines.slice(0, maxLines).join('\n')}\n… ${lines.length - maxLines} more lines`;
}

/** An argv as a shell line, for people. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}
