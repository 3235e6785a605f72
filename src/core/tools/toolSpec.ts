/**
 * One language-model tool, whole: what it is called and how it is described, its input schema, what
 * a call can reach, how a call is described to the person who approves it, and what it does. The VS
 * Code registration, the manifest generator and the CLI's `tool` command loop over the same list
 * (toolList.ts), so nothing switches on tool names elsewhere.
 */
import type { z } from 'zod';
import type { Settings } from '../spec/settings';
import type { HandlerContext } from './handlerContext';
import type { Reach, TargetView } from './reach';
import type { ImageOutput } from '../results/images';

/** A message for people: an English template with {0}-style placeholders, localized by the front end. */
export interface Words {
  readonly text: string;
  readonly args?: readonly (string | number)[];
}

export function words(text: string, ...args: (string | number)[]): Words {
  return args.length ? { text, args } : { text };
}

/** How a call is shown to the person who approves it (and while it runs). */
export interface CallDescription {
  /** Shown while the call runs: "Running python in a sandbox". */
  readonly progress: Words;
  /** The confirmation's title: "Run python code in a sandbox?". */
  readonly title: Words;
  /** The code or command the call runs, shown as a code block. */
  readonly code?: { readonly text: string; readonly language: string };
  /** Markdown lines after the code: files, paths, and what the sandbox can touch. */
  readonly details: readonly Words[];
}

/** Which sandbox a call targets, before anything is opened. */
export type TargetRequest =
  | { readonly kind: 'run'; readonly networkAllow?: readonly string[]; readonly secrets?: readonly string[] }
  | { readonly kind: 'session'; readonly sandboxId?: string }
  | {
      readonly kind: 'open';
      /** Undefined for the default session (of the service's default scope). */
      readonly sandboxId?: string;
      readonly workspaceAccess?: 'none' | 'copy' | 'ro' | 'rw';
      readonly network?: boolean;
      readonly networkAllow?: readonly string[];
      readonly secrets?: readonly string[];
    };

export interface DescribeContext {
  readonly target: TargetView;
  readonly settings: Settings;
}

/** What a handler returns: the text the model reads, and facts the front ends need without parsing it. */
export interface ToolOutput {
  readonly text: string;
  /** The exit code of the program the call ran, when it ran one. */
  readonly exitCode?: number | null;
  /** Images the call returns beside its text; the text says what they are. */
  readonly images?: readonly ImageOutput[];
}

export interface ToolSpec<S extends z.ZodType = z.ZodType, N extends string = string> {
  /** The tool's id in the manifest and in `vscode.lm.registerTool`. */
  readonly name: N;
  readonly displayName: string;
  /** One sentence for people (tool pickers, hovers). */
  readonly userDescription: string;
  /** For the model: when to use the tool and when not, what it returns, its limits (at most 1,024 characters). */
  readonly modelDescription: string;
  /** A codicon, `$(name)`. */
  readonly icon: `$(${string})`;
  readonly tags: readonly string[];
  readonly schema: S;
  /** How large a result can get, for the README's tool table and `tool --list`. */
  readonly budget: string;
  /** When a call asks first, for the README's tool table: what its reach is made of. */
  readonly asks: string;
  /** True when a call runs code or changes files: under the "always" confirmation rule every such call asks. */
  readonly changes: boolean;
  /** The sandbox a call targets. */
  target(input: z.output<S>): TargetRequest;
  /** What the call can touch outside its sandbox, given the sandbox it targets. */
  reach(input: z.output<S>, target: TargetView): Reach;
  describe(input: z.output<S>, context: DescribeContext): CallDescription;
  run(input: z.output<S>, context: HandlerContext): Promise<ToolOutput>;
}

/** Keeps a spec's input type tied to its schema. */
export function defineTool<S extends z.ZodType, N extends string>(spec: ToolSpec<S, N>): ToolSpec<S, N> {
  return spec;
}
