/** Hovers in the frontmatter: what a key means, from the schema's own descriptions, and what a value means. */
import { isScalar } from 'yaml';
import { analyzePrompt } from './analyzePrompt';
import { fieldDoc, valueDoc } from './schemaDocs';
import { secretItemAt, secretNameDoc, type PromptEnvironment } from './secretNames';
import { keyRange, pathAt, valueRange } from './yamlTree';

export interface PromptHover {
  /** Markdown. */
  contents: string;
  start: number;
  end: number;
}

export function hoverPrompt(
  text: string,
  offset: number,
  environment: PromptEnvironment = {},
): PromptHover | undefined {
  const analysis = analyzePrompt(text, environment);
  const { doc, frontmatter } = analysis;
  if (!doc || !frontmatter || offset < frontmatter.start || offset > frontmatter.end) return undefined;
  const hit = pathAt(doc.contents, offset - frontmatter.start);
  if (!hit) return undefined;
  const field = fieldDoc(hit.path, analysis.dialect);
  if (!field) return undefined;
  const parts = [`**${hit.path.join('.')}**: ${field.kind}`];
  if (field.description) parts.push(field.description);
  const value = hit.pair.value;
  const secret =
    !hit.onKey && analysis.dialect !== 'harness' && hit.path.join('.') === 'sandbox.secrets'
      ? secretItemAt(value, offset - frontmatter.start)
      : undefined;
  if (secret) {
    // A name: its binding, not the whole key's description again.
    const about = secretNameDoc(secret.value, environment) ?? `\`${secret.value}\`: ${field.description ?? ''}`;
    return {
      contents: `${parts[0]}\n\n${about}`,
      start: frontmatter.start + secret.range![0],
      end: frontmatter.start + secret.range![1],
    };
  }
  if (!hit.onKey && isScalar(value) && typeof value.value === 'string') {
    const docsKey = hit.path.length === 1 && hit.path[0] === 'sandbox' ? 'runtime' : field.key;
    const about = valueDoc(docsKey, value.value);
    if (about) parts.push(`\`${value.value}\`: ${about}`);
  }
  const range = hit.onKey ? keyRange(hit.pair) : valueRange({ node: value, pair: hit.pair });
  if (!range) return undefined;
  return { contents: parts.join('\n\n'), start: frontmatter.start + range[0], end: frontmatter.start + range[1] };
}
