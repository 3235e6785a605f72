/**
 * "Sandbox: Add Secret" and "Remove Secret": the user offers a secret to sandboxes by name.
 * The binding (domains and how the value is sent, or inside) goes to user settings
 * (`agentSandbox.secrets`); the value to VS Code's SecretStorage, asked once in a password box and
 * never shown again. Called with an entry and a value as its argument (a keybinding, a script),
 * Add Secret asks only for the user's confirmation, since any extension or agent can run a command.
 */
import * as vscode from 'vscode';
import { secretSettingSchema, describeSecret, type SecretSetting } from '../core/secrets/catalog';
import type { SandboxSecrets } from './secrets';
import { ENV_NAME } from '../core/secrets/secrets';

const SECTION = 'agentSandbox';

interface AddSecretArgs extends SecretSetting {
  value: string;
}

/** The entries in user settings (never a workspace's: a folder must not say where secrets go). */
function userEntries(): SecretSetting[] {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<SecretSetting[]>('secrets');
  return Array.isArray(inspected?.globalValue) ? [...inspected.globalValue] : [];
}

async function saveEntries(entries: SecretSetting[]): Promise<void> {
  await vscode.workspace
    .getConfiguration(SECTION)
    .update('secrets', entries.length ? entries : undefined, vscode.ConfigurationTarget.Global);
}

/** Checks an entry as the setting will; the problem in words, or undefined. */
function entryProblem(entry: SecretSetting): string | undefined {
  const parsed = secretSettingSchema.safeParse(entry);
  return parsed.success ? undefined : parsed.error.issues[0]?.message;
}

async function askEntry(existing: readonly SecretSetting[]): Promise<SecretSetting | undefined> {
  const name = await vscode.window.showInputBox({
    title: vscode.l10n.t('Add Secret (1/3): its name'),
    prompt: vscode.l10n.t('The variable a sandbox gets, like GITHUB_TOKEN. Agents ask for the secret by this name.'),
    ignoreFocusOut: true,
    validateInput: (text) =>
      ENV_NAME.test(text) ? undefined : vscode.l10n.t('Letters, digits and "_", not starting with a digit.'),
  });
  if (!name) return undefined;
  const bound = vscode.l10n.t('Bound to domains (recommended)');
  const inside = vscode.l10n.t('Inside the sandbox');
  const kind = await vscode.window.showQuickPick(
    [
      {
        label: bound,
        detail: vscode.l10n.t(
          'The sandbox holds a placeholder; the network proxy adds the value only to HTTPS requests to the domains you name.',
        ),
      },
      {
        label: inside,
        detail: vscode.l10n.t(
          'The value itself enters the sandbox as a variable (a password for a database the sandbox runs). Any code there can read it.',
        ),
      },
    ],
    { title: vscode.l10n.t('Add Secret (2/3): where its value goes'), ignoreFocusOut: true },
  );
  if (!kind) return undefined;
  if (kind.label === inside) return { name, inside: true };
  const had = existing.find((entry) => entry.name === name);
  const domainsText = await vscode.window.showInputBox({
    title: vscode.l10n.t('Add Secret (2/3): the domains it may be sent to'),
    prompt: vscode.l10n.t(
      'Comma-separated, like api.github.com, uploads.github.com. Sandboxes with the secret reach them.',
    ),
    value: had?.domains?.join(', '),
    ignoreFocusOut: true,
    validateInput: (text) => entryProblem({ name, domains: splitDomains(text) }),
  });
  if (!domainsText) return undefined;
  const domains = splitDomains(domainsText);
  const other = vscode.l10n.t('Another header…');
  const basic = vscode.l10n.t('Basic auth…');
  const how = await vscode.window.showQuickPick(
    ['Authorization: Bearer {value}', 'x-api-key: {value}', other, basic].map((label) => ({ label })),
    { title: vscode.l10n.t('Add Secret (2/3): how requests carry it'), ignoreFocusOut: true },
  );
  if (!how) return undefined;
  if (how.label === basic) {
    const user = await vscode.window.showInputBox({
      title: vscode.l10n.t('Add Secret: the basic auth user name (the secret is the password)'),
      ignoreFocusOut: true,
      validateInput: (text) => entryProblem({ name, domains, basicAuthUser: text }),
    });
    return user === undefined ? undefined : { name, domains, basicAuthUser: user };
  }
  const header =
    how.label === other
      ? await vscode.window.showInputBox({
          title: vscode.l10n.t('Add Secret: the header, with {value} where the secret goes'),
          value: 'X-Token: {value}',
          ignoreFocusOut: true,
          validateInput: (text) => entryProblem({ name, domains, header: text }),
        })
      : how.label;
  return header === undefined ? undefined : { name, domains, header };
}

function splitDomains(text: string): string[] {
  return text
    .split(',')
    .map((domain) => domain.trim())
    .filter(Boolean);
}

export function registerSecretCommands(secrets: SandboxSecrets): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('agentSandbox.addSecret', async (args?: AddSecretArgs) => {
      const existing = userEntries();
      let entry: SecretSetting | undefined;
      let value: string | undefined;
      if (args && typeof args === 'object') {
        const { value: given, ...rest } = args;
        const problem = entryProblem(rest);
        if (problem) throw new Error(vscode.l10n.t('The secret cannot be added: {0}', problem));
        if (typeof given !== 'string' || !given) throw new Error(vscode.l10n.t('The secret needs a value.'));
        // Commands can be run by anyone with arguments (an agent too): the user confirms what they set.
        const add = vscode.l10n.t('Add Secret');
        const chosen = await vscode.window.showWarningMessage(
          vscode.l10n.t('Add the secret {0}?', describeSecret(secretSettingSchema.parse(rest))),
          {
            modal: true,
            detail: existing.some((candidate) => candidate.name === rest.name)
              ? vscode.l10n.t('It replaces the secret of that name, its value and where it may be sent.')
              : vscode.l10n.t('Sandboxes that ask for it by name get it, after you confirm each.'),
          },
          add,
        );
        if (chosen !== add) return undefined;
        entry = rest;
        value = given;
      } else {
        entry = await askEntry(existing);
        if (!entry) return undefined;
        value = await vscode.window.showInputBox({
          title: vscode.l10n.t('Add Secret (3/3): the value of {0}', entry.name),
          prompt: vscode.l10n.t('Kept in VS Code’s secret storage and never shown again.'),
          password: true,
          ignoreFocusOut: true,
          validateInput: (text) => (text ? undefined : vscode.l10n.t('Give the value.')),
        });
        if (!value) return undefined;
      }
      await secrets.store(entry.name, value);
      await saveEntries([...existing.filter((candidate) => candidate.name !== entry.name), entry]);
      const parsed = secretSettingSchema.parse(entry);
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'Secret {0} added. A sandbox gets it when it asks for it by name (sandbox_open or sandbox_run with secrets, or secrets: in a .prompt file), after you confirm.',
          describeSecret(parsed),
        ),
      );
      return entry.name;
    }),
    vscode.commands.registerCommand('agentSandbox.removeSecret', async (name?: string) => {
      const existing = userEntries();
      const chosen =
        typeof name === 'string'
          ? name
          : (
              await vscode.window.showQuickPick(
                existing.map((entry) => ({ label: entry.name })),
                { title: vscode.l10n.t('Remove Secret'), placeHolder: vscode.l10n.t('The secret to remove') },
              )
            )?.label;
      if (!chosen) return undefined;
      if (typeof name === 'string') {
        const remove = vscode.l10n.t('Remove Secret');
        const confirmed = await vscode.window.showWarningMessage(
          vscode.l10n.t('Remove the secret {0}?', chosen),
          { modal: true, detail: vscode.l10n.t('Its value is deleted from VS Code’s secret storage.') },
          remove,
        );
        if (confirmed !== remove) return undefined;
      }
      await secrets.delete(chosen);
      await saveEntries(existing.filter((entry) => entry.name !== chosen));
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Secret {0} removed. Open sandboxes that have it keep it until they close.', chosen),
      );
      return chosen;
    }),
  ];
}
