/**
 * `wget` for a virtual sandbox with the allowlist: just-bash has curl but no wget, and scripts use
 * both. The common forms only (`wget URL`, `-O FILE`, `-O -`, `-q`, `--header`), over the same fetch as
 * curl, so the allowlist decides every request. A refusal prints the reason that the 403 names.
 */
import { posix } from 'node:path';

type JustBash = typeof import('just-bash');
type Command = ReturnType<JustBash['defineCommand']>;

interface WgetArgs {
  urls: string[];
  output?: string;
  quiet: boolean;
  headers: Record<string, string>;
  method?: string;
  body?: string;
}

const USAGE = 'Usage: wget [-q] [-O FILE|-] [--header "Name: value"] [--post-data DATA] URL...\n';

export function wgetCommand(jb: JustBash): Command {
  return jb.defineCommand('wget', async (args, ctx) => {
    const parsed = parse(args);
    if (typeof parsed === 'string') return { stdout: '', stderr: `wget: ${parsed}\n${USAGE}`, exitCode: 2 };
    if (parsed.urls.length === 0) return { stdout: '', stderr: `wget: missing URL\n${USAGE}`, exitCode: 1 };
    if (!ctx.fetch) return { stdout: '', stderr: 'wget: this sandbox has no network\n', exitCode: 4 };
    let stdout = '';
    let stderr = '';
    let exitCode = 0;
    for (const given of parsed.urls) {
      const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? given : `http://${given}`;
      try {
        const answer = await ctx.fetch(url, {
          method: parsed.method ?? 'GET',
          headers: parsed.headers,
          ...(parsed.body !== undefined ? { body: parsed.body } : {}),
          followRedirects: true,
          signal: ctx.signal,
        });
        if (answer.status >= 400) {
          const text = Buffer.from(answer.body).toString('utf8').trim();
          stderr += `wget: ${url}: ERROR ${answer.status} ${answer.statusText}${answer.status === 403 && text ? `: ${text}` : ''}\n`;
          exitCode = 8;
          continue;
        }
        const bytes = Buffer.from(answer.body).toString('latin1');
        if (parsed.output === '-') stdout += bytes;
        else {
          const name = parsed.output ?? remoteName(answer.url);
          await ctx.fs.writeFile(ctx.fs.resolvePath(ctx.cwd, name), answer.body);
          if (!parsed.quiet) stderr += `'${name}' saved [${answer.body.byteLength}]\n`;
        }
      } catch (error) {
        stderr += `wget: ${url}: ${error instanceof Error ? error.message : String(error)}\n`;
        exitCode = 4;
      }
    }
    return { stdout, stderr, exitCode, stdoutKind: 'bytes' };
  });
}

function parse(args: readonly string[]): WgetArgs | string {
  const parsed: WgetArgs = { urls: [], quiet: false, headers: {} };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    const value = () => args[++index];
    if (arg === '-q' || arg === '--quiet' || arg === '-nv' || arg === '--no-verbose') parsed.quiet = true;
    else if (arg === '-O' || arg === '--output-document') parsed.output = value() ?? '-';
    else if (arg.startsWith('--output-document=')) parsed.output = arg.slice('--output-document='.length);
    else if (/^-q?O./.test(arg)) {
      parsed.quiet ||= arg.startsWith('-q');
      parsed.output = arg.slice(arg.indexOf('O') + 1);
    } else if (arg === '-qO' || arg === '-Oq') {
      parsed.quiet = true;
      parsed.output = value() ?? '-';
    } else if (arg === '--header' || arg.startsWith('--header=')) {
      const header = arg === '--header' ? value() : arg.slice('--header='.length);
      const colon = header?.indexOf(':') ?? -1;
      if (!header || colon <= 0) return `not a header: ${header ?? ''}`;
      parsed.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (arg === '--post-data' || arg.startsWith('--post-data=')) {
      parsed.body = arg === '--post-data' ? (value() ?? '') : arg.slice('--post-data='.length);
      parsed.method = 'POST';
    } else if (arg.startsWith('--method=')) parsed.method = arg.slice('--method='.length).toUpperCase();
    else if (arg === '--') parsed.urls.push(...args.slice(index + 1));
    else if (arg.startsWith('-')) return `unknown option ${arg}`;
    else parsed.urls.push(arg);
    if (arg === '--') break;
  }
  return parsed;
}

/** The file wget names after the URL: its last path segment, or index.html. */
function remoteName(url: string): string {
  try {
    const name = posix.basename(decodeURIComponent(new URL(url).pathname));
    return name && name !== '.' && name !== '..' ? name : 'index.html';
  } catch {
    return 'index.html';
  }
}
