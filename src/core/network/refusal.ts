/**
 * What a program is told when the allowlist refuses a connection, on every engine: an HTTP 403 whose
 * body names the reason, so that the program and the agent can tell why and ask the user instead of
 * retrying. The words are those of the Docker engine's egress proxy (egressProxy.ts).
 */

export const REFUSAL_STATUS = 403;

/** The body of a refusal: the reason, and where the user adds a name. */
export function refusalBody(reason: string): string {
  return `Agent Sandbox refused this connection: ${reason}. Ask the user to add the domain to the sandbox's network allowlist (agentSandbox.network.allow, or --allow-domain).\n`;
}
