/** The frontmatter's YAML as a tree of nodes with source ranges (offsets relative to the YAML text). */
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair } from 'yaml';

export type PathSegment = string | number;

export function parseYaml(text: string): Document.Parsed {
  // uniqueKeys reports duplicate keys as errors, as Go's yaml.v3 (Station) and js-yaml (Dotprompt) refuse them.
  return parseDocument(text, { prettyErrors: false, uniqueKeys: true, keepSourceTokens: true });
}

/** The text of a pair's key when it is a plain scalar key. */
export function keyOf(pair: Pair): string | undefined {
  const key = pair.key;
  if (isScalar(key) && (typeof key.value === 'string' || typeof key.value === 'number')) return String(key.value);
  return typeof key === 'string' ? key : undefined;
}

/** The pair with this key in a map node (the last one, as a YAML loader keeps it). */
export function findPair(map: unknown, key: string): Pair<Node, Node | null> | undefined {
  if (!isMap(map)) return undefined;
  let found: Pair<Node, Node | null> | undefined;
  for (const pair of map.items) if (keyOf(pair) === key) found = pair as Pair<Node, Node | null>;
  return found;
}

export interface Located {
  /** The node at the path, or the deepest one reached. */
  node: Node | null | undefined;
  /** The pair whose value that node is. */
  pair?: Pair<Node, Node | null>;
  /** True when the whole path exists. */
  complete: boolean;
}

export function locate(root: Node | null | undefined, path: readonly PathSegment[]): Located {
  let located: Located = { node: root, complete: true };
  for (const segment of path) {
    const node = located.node;
    if (typeof segment === 'number' && isSeq(node) && node.items[segment] !== undefined) {
      located = { node: node.items[segment] as Node, complete: true };
      continue;
    }
    const pair = typeof segment === 'string' ? findPair(node, segment) : undefined;
    if (!pair) return { ...located, complete: false };
    located = { node: pair.value, pair, complete: true };
  }
  return located;
}

/** Where to underline a value: a scalar itself, or the key of a collection (a whole block is too much). */
export function valueRange(located: Pick<Located, 'node' | 'pair'>): [number, number] | undefined {
  const { node, pair } = located;
  const scalarWithText = isScalar(node) && node.range && node.range[1] > node.range[0];
  if (scalarWithText) return [node.range![0], node.range![1]];
  if (pair) return keyRange(pair);
  if (node && 'range' in node && node.range) return [node.range[0], node.range[1]];
  return undefined;
}

export function keyRange(pair: Pair): [number, number] | undefined {
  const key = pair.key as Node | null;
  return key && typeof key === 'object' && 'range' in key && key.range ? [key.range[0], key.range[1]] : undefined;
}

/** The pairs of a map node, with their plain keys. */
export function pairsOf(map: unknown): { key: string; pair: Pair<Node, Node | null> }[] {
  if (!isMap(map)) return [];
  return map.items.flatMap((pair) => {
    const key = keyOf(pair);
    return key === undefined ? [] : [{ key, pair: pair as Pair<Node, Node | null> }];
  });
}

/** The chain of keys down to the pair whose key or value holds the offset. */
export function pathAt(
  root: Node | null | undefined,
  offset: number,
): { path: string[]; pair: Pair<Node, Node | null>; onKey: boolean } | undefined {
  let node: unknown = root;
  const path: string[] = [];
  for (;;) {
    if (!isMap(node)) return undefined;
    const hit = node.items.find((pair) => within(pair.key, offset) || within(pair.value, offset));
    const key = hit && keyOf(hit);
    if (!hit || key === undefined) return undefined;
    path.push(key);
    if (within(hit.key, offset)) return { path, pair: hit as Pair<Node, Node | null>, onKey: true };
    if (!isMap(hit.value)) return { path, pair: hit as Pair<Node, Node | null>, onKey: false };
    node = hit.value;
  }
}

function within(node: unknown, offset: number): boolean {
  const range = node && typeof node === 'object' && 'range' in node ? (node as Node).range : undefined;
  return Boolean(range && offset >= range[0] && offset <= range[1]);
}
