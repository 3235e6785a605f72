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
  /** On compute-mode containers and sessions a process owns (an MCP connection's): the process that made them (pid and host), so that gc knows when they are orphans. */
  ownerPid: 'org.agent-sandbox.owner-pid',
  ownerHost: 'org.agent-sandbox.owner-host',
  /** On containers made ahead of time for the warm pool. */
  pool: 'org.agent-sandbox.pool',
  /** On shared warm containers (sharedPool.ts): their configuration's key, the end of their wait, and the user they wait for (with ownerHost). */
  warm: 'org.agent-sandbox.warm',
  warmUntil: 'org.agent-sandbox.warm-until',
  ownerUid: 'org.agent-sandbox.owner-uid',
  /** On read-write sessions: the protected names mounted read-only, as JSON (SessionInfo.protectedPaths). */
  protected: 'org.agent-sandbox.protected',
  /** Protected names whose empty placeholder folders this container made or shares (protectedMounts.ts). */
  placeholders: 'org.agent-sandbox.placeholders',
  /** On read-write sessions: the workspace folder's use (bytes:entries) before the session existed (folderWatches.ts). */
  folderBaseline: 'org.agent-sandbox.folder-baseline',
  /** On the network relay of an allowlist sandbox (egress.ts): the sandbox's id. A relay carries no managed label: it is no session. */
  egressFor: 'org.agent-sandbox.egress-for',
} as const;

export const CONTAINER_PREFIX = 'agent-sandbox-';
