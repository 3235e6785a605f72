/**
 * What a tool is about to do, for the confirmation VS Code shows before it runs: the code or command,
 * and what it can touch. Built from the input and what is already known; never calls the engine.
 */
import * as vscode from 'vscode';
import type { SandboxService } from '../../core/sessions/sandboxService';
import type { ToolInput, ToolName } from '../../core/tools/schemas';
import { formatSize } from '../../core/spec/units';
import type { Settings } from '../../core/spec/settings';

const MAX_SHOWN_LINES = 40;

export interface Confirmation {
  invocationMessage: string;
  confirmation?: { title: string; message: vscode.MarkdownString };
}

export function describeInvocation(
  name: ToolName,
  input: unknown,
  service: SandboxService,
  settings: Settings,
): Confirmation {
  const id = (input as { sandbox_id?: string }).sandbox_id;
  const target = id ?? 'default';
  switch (name) {
    case 'sandbox_run': {
      const run = input as ToolInput<'sandbox_run'>;
      const runtime = run.runtime ?? (settings.defaultRuntime === 'linux' ? 'bash' : settings.defaultRuntime);
      const message = new vscode.MarkdownString();
      message.appendCodeblock(
        shown(run.code),
        runtime === 'node' ? 'javascript' : runtime === 'bash' ? 'bash' : 'python',
      );
      if (run.files?.length)
        message.appendMarkdown(
          `\n${vscode.l10n.t('Input files: {0}', run.files.map((file) => `\`${file.path}\``).join(', '))}\n`,
        );
      message.appendMarkdown(
        `\n${vscode.l10n.t('In a fresh container that is discarded afterwards. Workspace: not visible. Network: {0}. Limits: {1} memory, {2} CPU, {3} s.', settings.network ? vscode.l10n.t('on') : vscode.l10n.t('off'), formatSize(settings.limits.memory), settings.limits.cpus, run.timeout_seconds ?? settings.timeoutSeconds)}`,
      );
      return {
        invocationMessage: vscode.l10n.t('Running {0} in a sandbox', runtime),
        confirmation: { title: vscode.l10n.t('Run {0} code in a sandbox?', runtime), message },
      };
    }
    case 'sandbox_exec': {
      const exec = input as ToolInput<'sandbox_exec'>;
      const command = exec.command ?? (exec.cmd ?? []).map(quote).join(' ');
      const message = new vscode.MarkdownString();
      message.appendCodeblock(shown(command), 'sh');
      if (exec.cwd) message.appendMarkdown(`\n${vscode.l10n.t('In {0}.', `\`${exec.cwd}\``)}\n`);
      message.appendMarkdown(`\n${reach(service, id)}`);
      return {
        invocationMessage: vscode.l10n.t('Running a command in sandbox {0}', target),
        confirmation: { title: vscode.l10n.t('Run a command in sandbox {0}?', target), message },
      };
    }
    case 'sandbox_fs_write': {
      const write = input as ToolInput<'sandbox_fs_write'>;
      const message = new vscode.MarkdownString();
      for (const file of write.files.slice(0, 20))
        message.appendMarkdown(`- \`${file.path}\`${file.executable ? ' (executable)' : ''}\n`);
      if (write.files.length > 20)
        message.appendMarkdown(`- ${vscode.l10n.t('and {0} more', write.files.length - 20)}\n`);
      message.appendMarkdown(`\n${reach(service, id)}`);
      return {
        invocationMessage: vscode.l10n.t('Writing {0} file(s) in sandbox {1}', write.files.length, target),
        confirmation: {
          title: vscode.l10n.t('Write {0} file(s) in sandbox {1}?', write.files.length, target),
          message,
        },
      };
    }
    case 'sandbox_fs_delete': {
      const remove = input as ToolInput<'sandbox_fs_delete'>;
      const message = new vscode.MarkdownString(
        `${vscode.l10n.t('Delete {0}{1}.', `\`${remove.path}\``, remove.recursive ? vscode.l10n.t(' and everything in it') : '')}\n\n${reach(service, id)}`,
      );
      return {
        invocationMessage: vscode.l10n.t('Deleting {0} in sandbox {1}', remove.path, target),
        confirmation: { title: vscode.l10n.t('Delete a file in sandbox {0}?', target), message },
      };
    }
    case 'sandbox_open': {
      const open = input as ToolInput<'sandbox_open'>;
      const allowed = service.allowedAccess();
      const message = new vscode.MarkdownString(
        vscode.l10n.t(
          'Session {0}, runtime {1}. Workspace: {2}. Network: {3}.',
          `\`${open.session ?? 'default'}\``,
          open.runtime ?? settings.defaultRuntime,
          accessWords(open.workspace_access ?? allowed, allowed),
          open.network && settings.network ? vscode.l10n.t('on') : vscode.l10n.t('off'),
        ),
      );
      return {
        invocationMessage: vscode.l10n.t('Opening sandbox {0}', open.session ?? 'default'),
        confirmation: { title: vscode.l10n.t('Open a sandbox session?'), message },
      };
    }
    case 'sandbox_close':
      return {
        invocationMessage: vscode.l10n.t('Closing sandbox {0}', target),
        confirmation: {
          title: vscode.l10n.t('Close sandbox {0}?', target),
          message: new vscode.MarkdownString(vscode.l10n.t('Its files, installed packages and processes are lost.')),
        },
      };
    case 'sandbox_stage_file': {
      const stage = input as ToolInput<'sandbox_stage_file'>;
      const source =
        stage.key !== undefined
          ? vscode.l10n.t('the stored file {0}', `\`${stage.key}\``)
          : vscode.l10n.t('the workspace file {0}', `\`${stage.workspace_path}\``);
      const message = new vscode.MarkdownString(
        `${vscode.l10n.t('Copy {0} into sandbox {1} at {2}.', source, target, `\`${stage.path}\``)}\n\n${reach(service, id)}`,
      );
      return {
        invocationMessage: vscode.l10n.t('Copying a file into sandbox {0}', target),
        confirmation: { title: vscode.l10n.t('Copy a file into sandbox {0}?', target), message },
      };
    }
    case 'sandbox_publish_file': {
      const publish = input as ToolInput<'sandbox_publish_file'>;
      const copy = vscode.l10n.t('Copy {0} out of sandbox {1} into the file store', `\`${publish.path}\``, target);
      const save =
        publish.save_to_workspace === undefined
          ? ''
          : publish.overwrite
            ? vscode.l10n.t(
                ' and save it to {0} in the workspace folder, replacing the file there if there is one',
                `\`${publish.save_to_workspace}\``,
              )
            : vscode.l10n.t(
                ' and save it to {0} in the workspace folder (a new file)',
                `\`${publish.save_to_workspace}\``,
              );
      const title =
        publish.save_to_workspace === undefined
          ? vscode.l10n.t('Copy a file out of sandbox {0}?', target)
          : vscode.l10n.t('Save a file from sandbox {0} to the workspace?', target);
      return {
        invocationMessage: vscode.l10n.t('Copying {0} out of sandbox {1}', publish.path, target),
        confirmation: { title, message: new vscode.MarkdownString(`${copy}${save}.`) },
      };
    }
    case 'sandbox_fs_read':
      return {
        invocationMessage: vscode.l10n.t(
          'Reading {0} in sandbox {1}',
          (input as ToolInput<'sandbox_fs_read'>).path,
          target,
        ),
      };
    case 'sandbox_fs_list':
      return {
        invocationMessage: vscode.l10n.t(
          'Listing {0} in sandbox {1}',
          (input as ToolInput<'sandbox_fs_list'>).path ?? '/workspace',
          target,
        ),
      };
  }
}

/** What a session can touch: its own access when known, else the most the user allows. */
function reach(service: SandboxService, id: string | undefined): string {
  const known = service.known(id);
  if (known)
    return vscode.l10n.t(
      'Workspace: {0}. Network: {1}.',
      accessWords(known.workspaceAccess, known.workspaceAccess),
      known.network ? vscode.l10n.t('on') : vscode.l10n.t('off'),
    );
  return vscode.l10n.t('Workspace: {0}.', accessWords(service.allowedAccess(), service.allowedAccess()));
}

function accessWords(requested: string, allowed: string): string {
  const effective =
    ({ none: 0, ro: 1, rw: 2 } as Record<string, number>)[requested]! >
    ({ none: 0, ro: 1, rw: 2 } as Record<string, number>)[allowed]!
      ? allowed
      : requested;
  switch (effective) {
    case 'ro':
      return vscode.l10n.t('read-only at /workspace');
    case 'rw':
      return vscode.l10n.t('read-write at /workspace');
    default:
      return vscode.l10n.t('not visible');
  }
}

function shown(text: string): string {
  const lines = text.split('\n');
  return lines.length <= MAX_SHOWN_LINES
    ? text
    : `${lines.slice(0, MAX_SHOWN_LINES).join('\n')}\n… ${lines.length - MAX_SHOWN_LINES} more lines`;
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
