/** The command line's grammar: commands, their flags, and the spec layer the flags contribute. */
import { parseArgs } from 'node:util';
import { SandboxError } from '../core/errors';
import type { SpecLayer } from '../core/spec/spec';
import { RUNTIMES, WORKSPACE_ACCESS, type Runtime } from '../core/spec/specNames';
import { parseSize } from '../core/spec/units';

export const USAGE = `Usage: agent-sandbox <command> [options]

Run code in a hardened, throwaway container (compute mode) or a persistent session (code mode).

Commands:
  run    [--runtime python|node|bash] [--image IMG] (--code CODE | --file PATH | -)
         Run a snippet in a fresh sandbox that is discarded afterwards.
  open   [--session NAME] [--runtime R] [--image IMG] [--workspace none|copy|ro|rw]
         [--network | --allow-domain NAME...] [--pip PKG]... [--npm PKG]...
         Open a session (or reuse the one with that name) for this folder. Packages are installed
         with the network on for the install only.
  exec   [--session NAME] [--timeout SECONDS] [-i] -- COMMAND [ARGS...]
         Run a command in a session. -i passes this process's standard input.
  exec   [--session NAME] [--timeout SECONDS] (--python CODE | --node CODE)
         Run Python (or JavaScript, in Node.js) in the session's persistent interpreter: variables and
         imports stay for the next call (from here, VS Code or an MCP client); the value of a final
         expression is printed.
  ls     List the sessions of this folder (--all-folders for every folder), each by the id
         --session takes: its name, or agent:KEY/NAME and workflow:RUN/NAME outside the
         workspace scope (sessions an agent or a workflow opened in VS Code).
  close  (--session NAME | --all) [--discard]
         Close a session, or every session of this folder. A --workspace copy session with
         changes not applied to the folder stays open (exit 1, its changes counted): review them
         with diff and apply, or close it losing them with --discard.
  diff   [--session NAME]
         The changes in a session opened with --workspace copy, against the folder as it was
         copied: a git-style unified diff (binary files as "Binary files ... differ", with sizes;
         names quoted as git quotes them), and the --expect digest of what it showed.
         --json: {"changes": [...], "hostChanged": [...], "diff": "...", "digest": "..."}.
  apply  [--session NAME] [--include-protected] [--expect DIGEST] [PATH...]
         Apply a copy session's changes (or those under PATH) to the folder. Held back unless
         --include-protected: .git, .vscode, .github, .devcontainer and files that gain an
         executable bit. A file changed in the folder since the copy is a conflict, never
         overwritten. --expect DIGEST (printed by diff): apply nothing unless the changes are
         still the ones that diff showed. Exit 1 when anything was held back or in conflict.
  engine Show which engine answers and where.
  gc     [--grace SECONDS] [--after SECONDS] [--folder PATH]
         Remove orphaned sandboxes: those of deleted folders, and those of VS Code windows gone for
         longer than the grace period (default 120 s). --after waits first.
  log    Print this folder's audit log as JSON Lines: every tool call made for it (from VS Code,
         agent-sandbox tool and mcp) and every network decision of its allowlist sandboxes still
         open (host, port, allowed or refused and why, bytes), oldest first.
  files  upload PATH [--name N] | download KEY [--output PATH] | list | delete KEY
         The local file store that sandbox_stage_file and sandbox_publish_file use (no engine needed).
         download writes to standard output without --output. The store's folder is
         AGENT_SANDBOX_FILE_STORE, or $XDG_DATA_HOME/agent-sandbox/files (~/.local/share/...);
         AGENT_SANDBOX_FILE_STORE_MAX_SIZE sets its size limit per file (default 100m).
  tool   NAME 'JSON' | NAME - | --list
         Call a language-model tool (sandbox_run, sandbox_exec, ...) with its JSON input, as Copilot
         does; - reads the JSON from standard input. The policy is what the flags allow, asked of
         no one: --workspace none|copy|ro|rw (most access; default none), --network (all of it) or
         --allow-domain NAME (its allowlist), and --allow-config-writes (let an rw sandbox change
         .git, .vscode, .github, .devcontainer).
         Prints the tool's text (--json: {"parts": [...]}); exit 1 when the tool failed.
  mcp    [--workspace none|copy|ro|rw] [--network | --allow-domain NAME...] [--allow-config-writes]
         [--http PORT]
         Serve the tools over the Model Context Protocol on standard input and output, for MCP
         clients (Claude Code, Cursor, Codex, VS Code's mcp.json, ...). The policy is what the flags
         allow, as for tool; calls beyond it are refused, or put to the user where the client can
         ask. Each connection has its own default sandbox, closed when the connection ends; named
         sandboxes are the folder's. --http serves Streamable HTTP on 127.0.0.1:PORT/mcp instead,
         with a bearer token printed at start (or AGENT_SANDBOX_MCP_TOKEN). Logs go to stderr.
  validate FILE|FOLDER|GLOB...
         Check .prompt files (frontmatter YAML and the sandbox block) as the editor does; prints
         file:line:col: severity: message (--json: a JSON array). Exit 1 on errors, 0 with only
         warnings. Needs no engine.
  render FILE [--input JSON | --input-file PATH]
         Render a .prompt file with Dotprompt as its agent would get it, to check it without a model:
         prints each message as --- role --- and its text (--json: the messages, the model, tools,
         sandbox, max_steps and output schema). The input (--input-file - reads standard input) is
         checked against the file's input schema, and a file with errors (as validate finds them)
         is refused: exit 1, with the problems as file:line:col: message. Needs no engine.

Options for every command:
  --json                  Print one JSON object instead of text.
  --folder PATH           The workspace folder sessions belong to (default: the current directory).
  --engine auto|docker|virtual
                          Which engine runs sandboxes (default: AGENT_SANDBOX_ENGINE, else auto: Docker
                          when it answers, else the embedded virtual engine, which says so on stderr).
  --engine-host URL       Docker Engine address (default: DOCKER_HOST or the default socket).
  --show-secrets          Print the values of secrets as they are. Secrets are the host variables
                          whose names start with a prefix in AGENT_SANDBOX_ENV_PREFIXES (comma-
                          separated; default AGENT_SANDBOX_ENV_,STN_CODE_), given to every sandbox
                          without the prefix; everything printed shows their values as [secret:NAME].
Sandbox options (run, open):
  --memory SIZE  --cpus N  --pids N  --timeout SECONDS  --network  --env NAME=VALUE
  --allow-domain NAME     Reach only this name on the network, through a proxy that checks and
                          records every connection (repeat it; *.example.com for subdomains,
                          localhost:PORT for a port of this machine). Instead of --network.
  --map-host NAME=ADDRESS Resolve NAME to ADDRESS for the allowlist (like /etc/hosts); such a name
                          may lead to this machine or its network.
  --secret NAME=DOMAIN[,DOMAIN...]:HOW
                          A bound secret (run, open, tool, mcp; Docker): the value of the host variable NAME
                          never enters the sandbox, whose NAME holds a placeholder; the proxy puts
                          the value in HTTPS requests to DOMAIN only, which joins the allowlist.
                          HOW: header:Authorization: Bearer {value}, header:x-api-key: {value},
                          or basic:USER.
  --inside-secret NAME    A secret whose value enters the sandbox as the variable NAME (a password
                          for a database the sandbox runs); shown as [secret:NAME] in what is printed.
  --secrets-file PATH     Values of secrets as NAME=VALUE lines, in a file only you can read
                          (chmod 600); else each value is the host variable NAME. With tool and mcp,
                          --secret and --inside-secret offer the secrets to the model, which asks
                          for them by name (sandbox_open's and sandbox_run's secrets).
  --disk SIZE    Disk for each writable place (/tmp, $HOME, /workspace; default 1g), kept in memory.
  --inodes N     Files and folders for each writable place (default 100000).
  --allow-config-writes   With --workspace rw: let the sandbox change .git, .vscode, .github and
                          .devcontainer at the top of the folder (protected otherwise).
Images: --image, or AGENT_SANDBOX_IMAGE_PYTHON / _NODE / _BASH / _LINUX.

Exit codes: the sandboxed program's own; 124 when it timed out; 125 when the sandbox itself failed; 2 for bad usage.`;

export const COMMANDS = [
  'run',
  'open',
  'exec',
  'ls',
  'close',
  'diff',
  'apply',
  'engine',
  'gc',
  'log',
  'files',
  'validate',
  'render',
  'tool',
  'mcp',
  'help',
] as const;
export type Command = (typeof COMMANDS)[number];

const OPTIONS = {
  json: { type: 'boolean' },
  folder: { type: 'string' },
  engine: { type: 'string' },
  'engine-host': { type: 'string' },
  runtime: { type: 'string', short: 'r' },
  image: { type: 'string' },
  code: { type: 'string', short: 'c' },
  file: { type: 'string', short: 'f' },
  session: { type: 'string', short: 's' },
  workspace: { type: 'string', short: 'w' },
  network: { type: 'boolean' },
  'allow-domain': { type: 'string', multiple: true },
  'map-host': { type: 'string', multiple: true },
  secret: { type: 'string', multiple: true },
  'inside-secret': { type: 'string', multiple: true },
  'secrets-file': { type: 'string' },
  timeout: { type: 'string', short: 't' },
  memory: { type: 'string', short: 'm' },
  disk: { type: 'string' },
  inodes: { type: 'string' },
  cpus: { type: 'string' },
  pids: { type: 'string' },
  env: { type: 'string', short: 'e', multiple: true },
  interactive: { type: 'boolean', short: 'i' },
  all: { type: 'boolean' },
  'include-protected': { type: 'boolean' },
  expect: { type: 'string' },
  discard: { type: 'boolean' },
  pip: { type: 'string', multiple: true },
  npm: { type: 'string', multiple: true },
  after: { type: 'string' },
  grace: { type: 'string' },
  'all-folders': { type: 'boolean' },
  name: { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  list: { type: 'boolean' },
  'allow-config-writes': { type: 'boolean' },
  http: { type: 'string' },
  python: { type: 'string' },
  node: { type: 'string' },
  input: { type: 'string' },
  'input-file': { type: 'string' },
  'show-secrets': { type: 'boolean' },
} as const;

export interface ParsedArgs {
  command: Command;
  values: {
    json?: boolean;
    folder?: string;
    engine?: string;
    'engine-host'?: string;
    runtime?: string;
    image?: string;
    code?: string;
    file?: string;
    session?: string;
    workspace?: string;
    network?: boolean;
    'allow-domain'?: string[];
    'map-host'?: string[];
    secret?: string[];
    'inside-secret'?: string[];
    'secrets-file'?: string;
    timeout?: string;
    memory?: string;
    disk?: string;
    inodes?: string;
    cpus?: string;
    pids?: string;
    env?: string[];
    interactive?: boolean;
    all?: boolean;
    pip?: string[];
    npm?: string[];
    after?: string;
    grace?: string;
    'all-folders'?: boolean;
    name?: string;
    output?: string;
    help?: boolean;
    list?: boolean;
    'allow-config-writes'?: boolean;
    'include-protected'?: boolean;
    expect?: string;
    discard?: boolean;
    http?: string;
    'show-secrets'?: boolean;
    python?: string;
    node?: string;
    input?: string;
    'input-file'?: string;
  };
  positionals: string[];
}

/** A mistake on the command line itself (exit code 2), as opposed to a failure in the sandbox. */
export class UsageError extends SandboxError {
  constructor(message: string) {
    super('invalid-input', message, 'Run agent-sandbox help for usage.');
  }
}

export function usageError(message: string): UsageError {
  return new UsageError(message);
}

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h')
    return { command: 'help', values: {}, positionals: [] };
  if (!(COMMANDS as readonly string[]).includes(first)) throw usageError(`Unknown command "${first}".`);
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  return { command: first as Command, values: parsed.values, positionals: parsed.positionals };
}

export function runtimeFlag(value: string | undefined): Runtime | undefined {
  if (value === undefined) return undefined;
  if (!(RUNTIMES as readonly string[]).includes(value))
    throw usageError(`--runtime must be one of ${RUNTIMES.join(', ')}, not "${value}".`);
  return value as Runtime;
}

function numberFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw usageError(`--${name} must be a positive number, not "${value}".`);
  return number;
}

/** --map-host NAME=ADDRESS, repeated: the names the allowlist proxy resolves as the user says. */
export function hostMappings(pairs: readonly string[]): Record<string, string> {
  const hosts: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--map-host takes NAME=ADDRESS, like pypi.internal=10.0.0.5, not "${pair}".`);
    hosts[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return hosts;
}

/** The spec layer given by flags; the schema validates bounds afterwards. */
export function specFromFlags(values: ParsedArgs['values']): SpecLayer {
  const workspace = values.workspace;
  if (workspace !== undefined && !(WORKSPACE_ACCESS as readonly string[]).includes(workspace)) {
    throw usageError(`--workspace must be one of ${WORKSPACE_ACCESS.join(', ')}, not "${workspace}".`);
  }
  if (values.memory !== undefined && parseSize(values.memory) === undefined)
    throw usageError(`--memory must be a size like 512m or 1g, not "${values.memory}".`);
  if (values.disk !== undefined && parseSize(values.disk) === undefined)
    throw usageError(`--disk must be a size like 256m or 2g, not "${values.disk}".`);
  const env: Record<string, string> = {};
  for (const pair of values.env ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--env takes NAME=VALUE, not "${pair}".`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return {
    runtime: runtimeFlag(values.runtime),
    timeoutSeconds: numberFlag('timeout', values.timeout),
    network: values.network,
    ...(values['allow-domain'] ? { networkAllow: values['allow-domain'] } : {}),
    ...(values['map-host'] ? { networkHosts: hostMappings(values['map-host']) } : {}),
    workspaceAccess: workspace as SpecLayer['workspaceAccess'],
    limits: {
      memoryBytes: values.memory,
      diskBytes: values.disk,
      inodes: numberFlag('inodes', values.inodes),
      cpus: numberFlag('cpus', values.cpus),
      pids: numberFlag('pids', values.pids),
    },
    env,
    pipPackages: values.pip,
    npmPackages: values.npm,
  };
}
