/**
 * Renders a `.prompt` file with the official `dotprompt` package: frontmatter and Handlebars body,
 * partials from the file's folder, the input checked against the file's input schema. A file with
 * errors in the editor's own analysis is refused with those errors; only errors block, not warnings.
 * Besides the messages, the result carries what running the agent needs: model, tools, sandbox,
 * step limit, output schema.
 */
import { picoschema, type Message, type ParsedPrompt } from 'dotprompt';
import { agentName, analyzePrompt, type PromptAnalysis } from './analyzePrompt';
import { checkInput } from './renderInput';
import type { PartialReader } from './renderPartials';
import { isolatedDotprompt, templateProblem } from './renderTemplate';
import { locate, valueRange, type PathSegment } from './yamlTree';
import { secretsFromFrontmatter, specFromFrontmatter } from '../spec/frontmatterSpec';
import type { SpecLayer } from '../spec/spec';
import { errorMessage } from '../errors';

/** Steps an agent takes when its file does not say (`max_steps`). */
export const DEFAULT_MAX_STEPS = 8;

export type RenderedPart = { text: string } | { media: { url: string; contentType?: string } };

export interface RenderedMessage {
  /** Dotprompt's roles: system, user, model, tool (or what `{{role}}` named). */
  role: string;
  content: RenderedPart[];
}

export interface RenderedPrompt {
  /** The agent's name: metadata.name, name, or the file's name. */
  name: string;
  model?: string;
  tools: string[];
  /** The `sandbox:` block as a spec layer; absent without one (or for Station's harness dialect). */
  sandbox?: SpecLayer;
  /** The secrets the `sandbox:` block names, which the agent's sandbox asks for (openSession's secrets); absent when none. */
  secrets?: string[];
  maxSteps: number;
  /** The output the file asks for; its schema is JSON Schema (Picoschema expanded by Dotprompt). */
  output?: { format?: string; schema?: Record<string, unknown> };
  /** The input the prompt was rendered with: the given values over `input.default`. */
  input: Record<string, unknown>;
  messages: RenderedMessage[];
  /** What the render could not honour, said for the user. */
  notes: string[];
}

/** A problem in the file (1-based line and column, as `file:line:col` prints them) or in the input. */
export type RenderProblem =
  { where: 'file'; line: number; column: number; message: string } | { where: 'input'; field: string; message: string };

export type RenderOutcome = { ok: true; prompt: RenderedPrompt } | { ok: false; problems: RenderProblem[] };

export interface RenderRequest {
  /** The file's text, and its path (for its name and the messages). */
  text: string;
  file: string;
  input?: Record<string, unknown>;
  /** Reads `{{> name}}`; without it, a file that uses partials is refused. */
  readPartial?: PartialReader;
}

/** One line per problem: `file:line:col: message`, or `file: input: message` (the message names the field). */
export function formatRenderProblem(file: string, problem: RenderProblem): string {
  return problem.where === 'file'
    ? `${file}:${problem.line}:${problem.column}: ${problem.message}`
    : `${file}: input: ${problem.message}`;
}

export async function renderPrompt(request: RenderRequest): Promise<RenderOutcome> {
  const analysis = analyzePrompt(request.text);
  const errors = analysis.problems.filter((problem) => problem.severity === 'error');
  if (errors.length > 0)
    return refuse(
      errors.map((problem) => ({
        where: 'file',
        line: problem.range.start.line + 1,
        column: problem.range.start.character + 1,
        message: problem.message,
      })),
    );

  const at = (path: PathSegment[], message: string): RenderProblem => frontmatterProblem(analysis, path, message);
  const problems: RenderProblem[] = [];
  const data = analysis.data ?? {};
  const facts = frontmatterFacts(data, at, problems);
  const notes: string[] = [];
  let sandbox: SpecLayer | undefined;
  let secrets: string[] = [];
  if (analysis.sandbox?.style === 'harness')
    notes.push(
      "The sandbox block is written for Station's agent harness (mode host, docker or e2b): Agent Sandbox does not read it, so the agent gets the default sandbox.",
    );
  else if (analysis.sandbox)
    try {
      sandbox = specFromFrontmatter(analysis.sandbox.value);
      secrets = secretsFromFrontmatter(analysis.sandbox.value);
    } catch (error) {
      problems.push(at(['sandbox'], errorMessage(error)));
    }

  const source = dotpromptSource(analysis);
  const { dotprompt, handlebars } = isolatedDotprompt({
    partialResolver: async (name) => (request.readPartial ? ((await request.readPartial(name)) ?? null) : null),
  });
  const parsed: ParsedPrompt = dotprompt.parse(source.text);
  const template = source.locate;
  // Dotprompt reads the YAML again with its own options, and drops a frontmatter it cannot read.
  if (analysis.data && !parsed.raw)
    problems.push(
      at([], 'Dotprompt cannot read this frontmatter, though its YAML is valid: simplify it (anchors, tags).'),
    );
  try {
    handlebars.parse(parsed.template);
  } catch (error) {
    problems.push(template(templateProblem(error, parsed.template)));
  }
  const inputSchema = await jsonSchema(parsed.input?.schema, ['input', 'schema'], at, problems);
  const outputSchema = await jsonSchema(parsed.output?.schema, ['output', 'schema'], at, problems);
  const format = typeof parsed.output?.format === 'string' ? parsed.output.format : undefined;
  const output =
    format !== undefined || outputSchema
      ? { ...(format !== undefined ? { format } : {}), ...(outputSchema ? { schema: outputSchema } : {}) }
      : undefined;
  if (problems.length > 0) return refuse(problems);

  const defaults = plainObject(parsed.input?.default) ?? {};
  const input = { ...defaults, ...request.input };
  if (inputSchema) {
    let inputProblems;
    try {
      inputProblems = checkInput(inputSchema, input);
    } catch (error) {
      return refuse([at(['input', 'schema'], `The input schema cannot be checked: ${errorMessage(error)}`)]);
    }
    if (inputProblems.length > 0) return refuse(inputProblems.map((problem) => ({ where: 'input', ...problem })));
  }

  let messages: Message[];
  try {
    const render = await dotprompt.compile(parsed);
    messages = (await render({ input })).messages;
  } catch (error) {
    const problem = templateProblem(error, parsed.template);
    return refuse([template(problem)]);
  }
  return {
    ok: true,
    prompt: {
      name: agentName(analysis, request.file),
      ...facts,
      ...(sandbox ? { sandbox } : {}),
      ...(secrets.length ? { secrets } : {}),
      ...(output ? { output } : {}),
      input,
      messages: messages.map(renderedMessage),
      notes,
    },
  };
}

/** A schema as JSON Schema: Picoschema expanded as Dotprompt does, JSON Schema as it is. */
async function jsonSchema(
  schema: unknown,
  path: PathSegment[],
  at: (path: PathSegment[], message: string) => RenderProblem,
  problems: RenderProblem[],
): Promise<Record<string, unknown> | undefined> {
  if (schema === undefined || schema === null) return undefined;
  try {
    return ((await picoschema(schema)) ?? undefined) as Record<string, unknown> | undefined;
  } catch (error) {
    const named = typeof schema === 'string' && /unsupported scalar type/.test(errorMessage(error));
    problems.push(
      at(
        path,
        named
          ? `${path.join('.')} names a schema, ${schema}, that is defined nowhere here: write the schema in the file (Picoschema or JSON Schema).`
          : `${path.join('.')} cannot be read: ${errorMessage(error)}`,
      ),
    );
    return undefined;
  }
}

function refuse(problems: RenderProblem[]): RenderOutcome {
  return { ok: false, problems };
}

/** model, tools and max_steps, whose wrong kinds the editor only warns about but an agent cannot run with. */
function frontmatterFacts(
  data: Record<string, unknown>,
  at: (path: PathSegment[], message: string) => RenderProblem,
  problems: RenderProblem[],
): { model?: string; tools: string[]; maxSteps: number } {
  const { model, tools } = data;
  if (model !== undefined && model !== null && typeof model !== 'string')
    problems.push(at(['model'], 'model must be the name of a model, like openai/gpt-4o.'));
  if (tools !== undefined && tools !== null && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string')))
    problems.push(at(['tools'], 'tools must be a list of tool names, like [sandbox_run, sandbox_exec].'));
  const harness = plainObject(data.harness_config);
  const stepsPath =
    data.max_steps === undefined && harness?.max_steps !== undefined ? ['harness_config', 'max_steps'] : ['max_steps'];
  const steps = data.max_steps ?? harness?.max_steps;
  if (steps !== undefined && steps !== null && !(Number.isInteger(steps) && (steps as number) > 0))
    problems.push(
      at(stepsPath, `max_steps must be a whole number of model turns, 1 or more, like ${DEFAULT_MAX_STEPS}.`),
    );
  return {
    ...(typeof model === 'string' ? { model } : {}),
    tools: Array.isArray(tools) ? tools.filter((t): t is string => typeof t === 'string') : [],
    maxSteps: typeof steps === 'number' && Number.isInteger(steps) && steps > 0 ? steps : DEFAULT_MAX_STEPS,
  };
}

/** A problem at a frontmatter key's value (or the key of a block), else at the opening fence. */
function frontmatterProblem(analysis: PromptAnalysis, path: PathSegment[], message: string): RenderProblem {
  const base = analysis.frontmatter?.start ?? 0;
  const range = analysis.doc ? valueRange(locate(analysis.doc.contents as never, path)) : undefined;
  const position = analysis.lines.position(range ? base + range[0] : (analysis.frontmatter?.openStart ?? 0));
  return { where: 'file', line: position.line + 1, column: position.character + 1, message };
}

/**
 * The text given to Dotprompt, and how a line of its template maps to the file. Dotprompt takes the
 * body after the closing fence, trimmed; a file without YAML between the fences is given as its body.
 */
function dotpromptSource(analysis: PromptAnalysis): {
  text: string;
  locate: (problem: { line: number; column: number; message: string }) => RenderProblem;
} {
  const { text, frontmatter, lines } = analysis;
  let source: string;
  let templateStart: number;
  if (!frontmatter) {
    templateStart = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    source = text.slice(templateStart);
  } else if (text.slice(frontmatter.start, frontmatter.end).trim() === '') {
    templateStart = frontmatter.bodyStart;
    source = text.slice(templateStart);
  } else {
    source = text.slice(frontmatter.openStart);
    if (frontmatter.bodyStart === text.length && !/\n$/.test(source)) source += '\n';
    templateStart =
      frontmatter.bodyStart +
      (text.slice(frontmatter.bodyStart).length - text.slice(frontmatter.bodyStart).trimStart().length);
  }
  const start = lines.position(templateStart);
  return {
    text: source,
    locate: ({ line, column, message }) => ({
      where: 'file',
      line: start.line + line,
      column: (line === 1 ? start.character : 0) + column + 1,
      message,
    }),
  };
}

function renderedMessage(message: Message): RenderedMessage {
  const content: RenderedPart[] = [];
  for (const part of message.content) {
    if (typeof part.text === 'string') content.push({ text: part.text });
    else if (part.media)
      content.push({
        media: { url: part.media.url, ...(part.media.contentType ? { contentType: part.media.contentType } : {}) },
      });
  }
  return { role: message.role, content };
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
