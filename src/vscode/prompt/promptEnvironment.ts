/** What the `.prompt` checks know beyond the file in VS Code: the secrets the user offers (agentSandbox.secrets, user settings only). */
import * as vscode from 'vscode';
import type { PromptEnvironment } from '../../core/prompt/secretNames';
import { secretSettingsSchema } from '../../core/secrets/catalog';

export const SECRETS_SETTING = 'agentSandbox.secrets';

/** The offered secrets; an invalid setting (which sandboxes refuse anyway) leaves names checked for syntax only. */
export function promptEnvironment(): PromptEnvironment {
  const inspected = vscode.workspace.getConfiguration('agentSandbox').inspect<unknown>('secrets');
  const parsed = secretSettingsSchema.safeParse(inspected?.globalValue ?? []);
  return parsed.success ? { secrets: parsed.data } : {};
}
