/** The labels that mark a container as ours and carry what another process needs to use it again. */
export const LABEL = {
  managed: 'org.agent-sandbox.managed',
  mode: 'org.agent-sandbox.mode',
  session: 'org.agent-sandbox.session',
  workspace: 'org.agent-sandbox.workspace',
  created: 'org.agent-sandbox.created',
  spec: 'org.agent-sandbox.spec',
  user: 'org.agent-sandbox.user',
  notices: 'org.agent-sandbox.notices',
  scope: 'org.agent-sandbox.scope',
  scopeKey: 'org.agent-sandbox.scope-key',
  client: 'org.agent-sandbox.client',
} as const;

export const CONTAINER_PREFIX = 'agent-sandbox-';
