/**
 * The language-model tools as MCP tools, from the same list as VS Code's registration and the
 * manifest (core/tools/toolList.ts): one source for names, descriptions and input schemas.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { toolInputSchema } from '../core/tools/jsonSchema';
import { TOOLS, type AnyToolSpec } from '../core/tools/toolList';

/** What a call of each tool does to things outside a private sandbox, as MCP's hints say it (clients may auto-approve read-only tools). */
function annotations(spec: AnyToolSpec, network: boolean): NonNullable<Tool['annotations']> {
  const deletes = spec.name === 'sandbox_fs_delete' || spec.name === 'sandbox_close';
  return {
    title: spec.displayName,
    readOnlyHint: !spec.changes && spec.name !== 'sandbox_open',
    destructiveHint: deletes,
    idempotentHint: !spec.changes,
    // Code in a sandbox reaches the network only where the server's policy (--network) allows it.
    openWorldHint: network && spec.changes,
  };
}

/** The tools, with hints for a server whose sandboxes have the network or not. */
export function mcpToolList(options: { network: boolean }): Tool[] {
  return TOOLS.map((spec) => ({
    name: spec.name,
    title: spec.displayName,
    description: spec.modelDescription,
    inputSchema: toolInputSchema(spec.schema) as Tool['inputSchema'],
    annotations: annotations(spec, options.network),
  }));
}
