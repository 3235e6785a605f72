/** sandbox_open: opens a persistent sandbox (or returns the open one) with the access the user allows. */
import { z } from 'zod';
import { sandboxIdFor } from '../../sessions/sessions';
import { formatSession } from '../format';
import { sessionReach } from '../reach';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  SMALL_RESULT,
  accessPhrase,
  allowDomainsField,
  networkPhrase,
  secretsField,
  secretsPhrase,
} from './common';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export const openInputSchema = z
  .object({
    session: z
      .string()
      .regex(NAME, 'a session name is 1-63 letters, digits, ".", "_" or "-"')
      .optional()
      .describe(
        'A name for a separate sandbox beside the default one, like "build". Opening an existing name returns that sandbox.',
      ),
    runtime: z
      .enum(['python', 'node', 'bash', 'linux'])
      .optional()
      .describe('The runtime of a new sandbox: python, node, bash or linux.'),
    workspace_access: z
      .enum(['none', 'copy', 'ro', 'rw'])
      .optional()
      .describe(
        'How the sandbox should see the workspace folder at /workspace: none, copy (a private copy to change freely; the user reviews the diff), ro (read-only) or rw. Never more than the user allowed.',
      ),
    network: z.boolean().optional().describe('Ask for network access. Granted only if the user allows network.'),
    allow_domains: allowDomainsField.optional(),
    secrets: secretsField.optional(),
    scope: z
      .enum(['workspace', 'agent', 'workflow'])
      .optional()
      .describe(
        'Who shares the sandbox: workspace (default: one per workspace folder), agent (one per agent, give agent), or workflow (one per workflow run, give workflow_run). Sandboxes of different scopes never share a container.',
      ),
    agent: z.string().regex(NAME).optional().describe('The agent\'s name, with scope "agent".'),
    workflow_run: z.string().regex(NAME).optional().describe('The workflow run\'s id, with scope "workflow".'),
  })
  .strict()
  .refine((input) => input.scope !== 'agent' || input.agent !== undefined, {
    message: 'scope "agent" needs agent (the agent\'s name)',
    path: ['agent'],
  })
  .refine((input) => input.scope !== 'workflow' || input.workflow_run !== undefined, {
    message: 'scope "workflow" needs workflow_run (the run\'s id)',
    path: ['workflow_run'],
  });

type OpenInput = z.output<typeof openInputSchema>;

export function openScope(input: OpenInput) {
  return input.scope === 'agent'
    ? { kind: 'agent' as const, key: input.agent }
    : input.scope === 'workflow'
      ? { kind: 'workflow' as const, key: input.workflow_run }
      : undefined;
}

export const openTool = defineTool({
  name: 'sandbox_open',
  displayName: 'Open Sandbox',
  userDescription: 'Opens a persistent sandbox, or returns the one already open, and shows its configuration.',
  modelDescription: [
    'Open a persistent Linux sandbox, or return the one open under that name, with its sandbox_id, runtime, image, limits, workspace access and network.',
    'You rarely need it: sandbox_exec and the sandbox_fs_* tools open the default sandbox of this workspace on first use.',
    "Call it to see how a sandbox is configured; to ask for workspace access (none: private /workspace; copy: a private copy of the folder whose changes the user reviews; ro: the folder read-only at /workspace; rw: changes land in the user's files) or network (all, or only allow_domains), granted only up to what the user allowed (the result says what you got);",
    'or to create a named sandbox (`session`, like "build") beside the default one, then pass that name as sandbox_id.',
    'runtime picks the image of a new sandbox: python, node, bash, or linux (a general Debian shell).',
    'Files, installed packages and background processes persist until sandbox_close or idle collection.',
    NEXT_NOTE,
  ].join(' '),
  icon: '$(vm)',
  tags: ['sandbox'],
  schema: openInputSchema,
  budget: SMALL_RESULT,
  asks: 'when the sandbox would see your folder (ro, rw), have the network or install packages, beyond what you allowed for it',
  changes: false,
  target: (input) => ({
    kind: 'open',
    sandboxId:
      input.session === undefined && input.scope === undefined
        ? undefined
        : sandboxIdFor(openScope(input), input.session ?? 'default'),
    workspaceAccess: input.workspace_access,
    network: input.network,
    networkAllow: input.allow_domains,
    secrets: input.secrets,
  }),
  reach: (_input, target) => sessionReach(target),
  describe(input, { target, settings }) {
    return {
      progress: words('Opening sandbox {0}', target.sandboxId),
      title: words('Open sandbox {0}?', target.sandboxId),
      details: [
        words(
          'Runtime {0}. Workspace: {1}. Network: {2}.{4}{3}',
          input.runtime ?? settings.defaultRuntime,
          accessPhrase(target.workspaceAccess),
          networkPhrase(target),
          target.open ? ' (already open)' : '',
          secretsPhrase(target),
        ),
      ],
    };
  },
  async run(input, context) {
    const opened = await context.service.openSession(
      {
        session: input.session,
        scope: openScope(input),
        runtime: input.runtime,
        workspaceAccess: input.workspace_access,
        network: input.network,
        networkAllow: input.allow_domains,
        secrets: input.secrets,
      },
      { signal: context.signal, onProgress: context.onProgress, admit: context.admit },
    );
    const text = formatSession(opened.sandbox.info, opened.created, context.capabilities);
    return { text: opened.notices.length ? `${text}\n${opened.notices.join('\n')}` : text };
  },
});
