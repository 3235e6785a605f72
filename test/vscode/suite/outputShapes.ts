// Output shapes that are hard on a tokenizer, made inside the sandbox by a small Python program:
// one run of one character, base64 and minified JSON on one line, many short lines, and a progress
// bar of ANSI colour escapes and carriage returns. Seeded, so a failing case can be replayed.

export const SHAPES = ['run', 'base64', 'json', 'lines', 'ansi'] as const;
export type Shape = (typeof SHAPES)[number];

/** Writes exactly `size` characters of `shape` to `stream`, then exits with `code`. */
export const GENERATOR = String.raw`
import base64, json, random, sys

def make(shape, size, seed):
    rnd = random.Random(seed)
    if shape == 'run':
        return 'x' * size
    if shape == 'base64':
        return base64.b64encode(rnd.randbytes(size * 3 // 4 + 3)).decode()[:size]
    pieces, total, i = [], 0, 0
    while total < size:
        if shape == 'json':
            piece = json.dumps({'id': i, 'name': 'item-%d' % i, 'score': rnd.random(), 'tags': ['a', 'b']}, separators=(',', ':')) + ','
        elif shape == 'lines':
            piece = '%08d %s\n' % (i, ' '.join(rnd.choice(['alpha', 'beta', 'gamma', 'delta', 'ok', 'error']) for _ in range(8)))
        else:
            piece = '\x1b[32m%s\x1b[0m%03d%%\r' % ('#' * (i % 40), i % 101)
        pieces.append(piece)
        total += len(piece)
        i += 1
    text = ''.join(pieces)
    return ('[' + text)[:size] if shape == 'json' else text[:size]

def emit(shape, size, stream, code, seed):
    out = sys.stdout if stream == 'stdout' else sys.stderr
    out.write(make(shape, size, seed))
    out.flush()
    sys.exit(code)

if __name__ == '__main__' and len(sys.argv) > 1:
    emit(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
`;

/** The generator as one sandbox_run program. */
export function generatorProgram(shape: Shape, size: number, stream: 'stdout' | 'stderr', code: number, seed: number) {
  return `${GENERATOR}\nemit(${JSON.stringify(shape)}, ${size}, ${JSON.stringify(stream)}, ${code}, ${seed})\n`;
}

/** The generator as a command, in a session where GENERATOR is saved at `path`. */
export function generatorCommand(
  path: string,
  shape: Shape,
  size: number,
  stream: 'stdout' | 'stderr',
  code: number,
  seed: number,
): string {
  return `python3 ${path} ${shape} ${size} ${stream} ${code} ${seed}`;
}
