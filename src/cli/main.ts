/**
 * The agent-sandbox command line. Each command's code is imported when that command runs (esbuild
 * keeps a dynamically imported module's top level for its first use), so `--help` or `validate`
 * does not evaluate the engine, and `run` not the MCP server or the .prompt tools.
 */
import { SandboxError } from '../core/errors';
import { USAGE, UsageError, parseCommandLine, usageError, type Command } from './args';
import { Output } from './output';
import type { CommandContext } from './commands';
import type { SandboxEngine } from '../core/engine/engine';

type EngineCommand = Exclude<Command, 'help' | 'files' | 'validate' | 'render' | 'tool' | 'mcp'>;

async function handler(
  command: EngineCommand,
): Promise<(engine: SandboxEngine, context: CommandContext) => Promise<number>> {
  if (command === 'log') return (await import('./logCommand')).logCommand;
  // The run path loads only its own code: not the sessions' service, the copy review or the file store.
  if (command === 'run') return (await import('./runCommand')).runCommand;
  const commands = await import('./commands');
  const handlers: Record<
    Exclude<EngineCommand, 'log' | 'run'>,
    (engine: SandboxEngine, context: CommandContext) => Promise<number>
  > = {
    open: commands.openCommand,
    exec: commands.execCommand,
    ls: commands.lsCommand,
    close: commands.closeCommand,
    diff: commands.diffCommand,
    apply: commands.applyCommand,
    engine: commands.engineCommand,
    gc: commands.gcCommand,
  };
  return handlers[command];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function main(argv: readonly string[]): Promise<number> {
  // Deprecation notices of the libraries are not the user's to act on, and would mix into stderr
  // (docker-modem's URL handling for ssh:// engines prints one on every command).
  process.noDeprecation = true;
  const wantsJson = argv.includes('--json');
  let output = new Output(wantsJson);
  const controller = new AbortController();
  const interrupt = () => controller.abort(new Error('interrupted (Ctrl-C)'));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let engine: SandboxEngine | undefined;
  try {
    // The folder keeper of a read-write session, started detached by the CLI and the extension.
    if (argv[0] === 'keep-folder')
      return await (await import('./keepFolderCommand')).keepFolder(argv.slice(1), controller.signal);
    // The host side of an allowlist sandbox's network, started detached by the engine that opens it.
    if (argv[0] === 'egress-proxy')
      return await (await import('./egressProxyCommand')).egressProxyCommand(argv.slice(1), controller.signal);
    // The filler of the shared warm containers, started detached by a run that claimed one.
    if (argv[0] === 'warm-fill')
      return await (await import('./warmFillCommand')).warmFill(argv.slice(1), controller.signal);
    const args = parseCommandLine(argv);
    output = new Output(Boolean(args.values.json));
    if (args.command === 'help' || args.values.help) {
      output.usage(USAGE);
      return 0;
    }
    // One redactor for everything this command prints: the host's secrets and those of every session it uses.
    const secretsFile = args.values['secrets-file'];
    const [{ cliSecrets }, { readSecretsFile }] = await Promise.all([import('./cliSecrets'), import('./secretFlags')]);
    const secrets = cliSecrets(process.env, secretsFile === undefined ? {} : readSecretsFile(secretsFile));
    if (!args.values['show-secrets']) output.redactWith(secrets.redact);
    // The file store is local: its commands work without an engine.
    if (args.command === 'files')
      return await (
        await import('./commands')
      ).filesCommand({ args, output, signal: controller.signal, readStdin, secrets });
    // Checking and rendering .prompt files is pure analysis: no engine either, and nothing to clean up,
    // so Ctrl-C and SIGTERM end it at once (their default) rather than waiting for a read to notice an abort.
    if (args.command === 'validate' || args.command === 'render') {
      process.removeListener('SIGINT', interrupt);
      process.removeListener('SIGTERM', interrupt);
      const command =
        args.command === 'validate'
          ? (await import('./validateCommand')).validateCommand
          : (await import('./renderCommand')).renderCommand;
      return await command({ args, output, signal: controller.signal, readStdin, secrets });
    }
    // open and run give their sandbox the secrets; tool and mcp offer them to the model, which asks by name.
    if (args.values.secret?.length && !['open', 'run', 'tool', 'mcp'].includes(args.command))
      throw usageError(
        `--secret binds a secret to a sandbox that open or run makes (or that tool and mcp offer), not to ${args.command}.`,
      );
    const context = { args, output, signal: controller.signal, readStdin, secrets };
    if (args.command === 'tool' && args.values.list) return (await import('./toolCommand')).toolList(context);
    const [{ createEngine }, { workspaceFolder }] = await Promise.all([
      import('./createEngine'),
      import('./commandFlags'),
    ]);
    engine = await createEngine(args, (message) => process.stderr.write(`agent-sandbox: ${message}\n`));
    if (args.command === 'tool')
      return await (await import('./toolCommand')).toolCommand(engine, context, workspaceFolder(args));
    if (args.command === 'mcp') {
      process.stdout.off('error', stdoutClosed);
      return await (await import('./mcpCommand')).mcpCommand(engine, context, workspaceFolder(args));
    }
    return await (
      await handler(args.command)
    )(engine, context);
  } catch (error) {
    output.error(error);
    // A secret the flags name with no value (host variable, --secrets-file) is the command line's to fix.
    if (error instanceof UsageError || SandboxError.is(error, 'secret-unavailable')) return 2;
    if (SandboxError.is(error, 'aborted')) return 130;
    return 125;
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
    await engine?.dispose();
  }
}

// A reader that stops early (agent-sandbox tool --list | head) is no error of ours. The MCP server
// takes this over: for it, a client that stops reading ends the connection, which closes its sandboxes.
function stdoutClosed(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
}
process.stdout.on('error', stdoutClosed);

/**
 * Once the command is done, the process ends when what it printed is written, even if a library
 * still holds a connection (an ssh:// engine's, whose request was cancelled while it connected,
 * stays open otherwise). The check is unref'd: a process with nothing left ends by itself first.
 */
function endWhenWritten(): void {
  setInterval(() => {
    if (!process.stdout.writableLength && !process.stderr.writableLength) process.exit();
  }, 250).unref();
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    endWhenWritten();
  },
  (error: unknown) => {
    process.stderr.write(`agent-sandbox: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 125;
    endWhenWritten();
  },
);
