/**
 * Every language-model tool, in the order the manifest lists them. The VS Code registration, the
 * manifest generator, the CLI's `tool` command and the hostile suite all loop over this list.
 */
import type { z } from 'zod';
import { closeTool } from './specs/close';
import { execTool } from './specs/exec';
import { fsDeleteTool } from './specs/fsDelete';
import { fsListTool } from './specs/fsList';
import { fsReadTool } from './specs/fsRead';
import { fsWriteTool } from './specs/fsWrite';
import { openTool } from './specs/open';
import { publishFileTool } from './specs/publishFile';
import { runTool } from './specs/run';
import { stageFileTool } from './specs/stageFile';
import type { ToolSpec } from './toolSpec';

export const TOOLS = [
  runTool,
  openTool,
  execTool,
  fsWriteTool,
  fsReadTool,
  fsListTool,
  fsDeleteTool,
  stageFileTool,
  publishFileTool,
  closeTool,
] as const;

export type ToolName = (typeof TOOLS)[number]['name'];

type SpecOf<N extends ToolName> = Extract<(typeof TOOLS)[number], { name: N }>;
export type ToolInput<N extends ToolName> = z.output<SpecOf<N>['schema']>;

/** A spec with its input type erased, for code that handles any tool. */
export type AnyToolSpec = ToolSpec<z.ZodType, ToolName>;

export function isToolName(name: string): name is ToolName {
  return TOOLS.some((tool) => tool.name === name);
}

export function toolSpec(name: ToolName): AnyToolSpec {
  return TOOLS.find((tool) => tool.name === name) as unknown as AnyToolSpec;
}
