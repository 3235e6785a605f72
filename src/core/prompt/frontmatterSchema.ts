/**
 * The whole frontmatter of a `.prompt` file: Dotprompt's own keys, the `sandbox` block, and the keys of
 * Station's platform and agent harness. Every object is open (Dotprompt allows extensions), so an
 * unknown top-level key is never a problem. The shipped JSON Schema is generated from this.
 */
import { z } from 'zod';
import { frontmatterSandboxObjectSchema, harnessSandboxSchema } from '../spec/frontmatterSpec';
import { RUNTIMES } from '../spec/spec';

const anything = z.unknown();

export const promptMetadataSchema = z
  .object({
    name: z.string().optional().describe("The agent's name; it names the agent's sandbox session."),
    description: z.string().optional().describe('What the agent does.'),
    tags: z.array(z.string()).optional().describe('Labels for finding the agent.'),
  })
  .loose()
  .describe('Free-form information about the prompt; `name` names the agent.');

export const sandboxFieldSchema = z
  .union([
    z.enum(RUNTIMES).describe('Shorthand: compute mode with this runtime.'),
    frontmatterSandboxObjectSchema,
    harnessSandboxSchema,
  ])
  .describe(
    "Where the agent's code runs: a runtime name (sandbox: python) or a block of settings (mode, runtime, image, limits, packages, ...).",
  );

export const harnessSchema = z
  .union([
    z.string().describe('The harness to use, like agentic.'),
    z
      .object({
        enabled: z.boolean().optional(),
        max_steps: z.number().optional(),
        timeout: z.union([z.string(), z.number()]).optional(),
      })
      .loose(),
  ])
  .describe('Station agent harness: which harness runs the agent, or its settings.');

export const dotpromptFrontmatterSchema = z
  .object({
    name: z.string().optional().describe("Name of the prompt (Dotprompt); Station also reads it as the agent's name."),
    description: z.string().optional().describe('What the prompt or agent does.'),
    variant: z.string().optional().describe('Dotprompt: the variant of the prompt, like "formal".'),
    version: z.string().optional().describe('Dotprompt: version of the prompt.'),
    model: z.string().optional().describe('Model to call, like openai/gpt-4o or googleai/gemini-2.0-flash.'),
    config: z
      .record(z.string(), anything)
      .optional()
      .describe('Model settings: temperature, maxOutputTokens, topK, ...'),
    tools: z.array(z.string()).optional().describe('Names of the tools the model may call.'),
    input: z
      .object({
        schema: anything.describe('Schema of the input, in Picoschema or JSON Schema.'),
        default: anything.describe('Input values used when none are given.'),
      })
      .partial()
      .loose()
      .optional()
      .describe("The prompt's input: its schema and defaults."),
    output: z
      .object({
        format: z.string().optional().describe('json, text or media.'),
        schema: anything.describe('Schema of the output, in Picoschema or JSON Schema.'),
      })
      .partial()
      .loose()
      .optional()
      .describe("The prompt's output: its format and schema."),
    metadata: promptMetadataSchema.optional(),
    ext: z.record(z.string(), anything).optional().describe('Dotprompt: extension fields, by namespace.'),
    sandbox: sandboxFieldSchema.optional(),
    max_steps: z.number().int().positive().optional().describe('Station: most model turns the agent may take.'),
    app: z.string().optional().describe('Station: the app the agent belongs to.'),
    app_type: z.string().optional().describe('Station: the kind of agent within its app.'),
    harness: harnessSchema.optional(),
    harness_config: z
      .object({ sandbox: harnessSandboxSchema.optional() })
      .loose()
      .optional()
      .describe('Station agent harness: its settings, like max_steps, timeout and sandbox.'),
    workspace: z
      .object({ mode: z.string().optional(), scope: z.string().optional(), cleanup: z.string().optional() })
      .loose()
      .optional()
      .describe("Station agent harness: the agent's workspace (mode, scope, cleanup)."),
  })
  .loose()
  .meta({
    title: 'Dotprompt .prompt frontmatter',
    description: 'YAML frontmatter of a Dotprompt .prompt file, with the sandbox block of Agent Sandbox and Station.',
  });

/** The keys whose presence marks a file written for Station's agent harness. */
export const HARNESS_KEYS = ['harness', 'harness_config', 'workspace'] as const;
